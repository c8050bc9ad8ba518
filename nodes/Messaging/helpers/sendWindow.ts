import { DateTime, Info } from 'luxon';
import { NodeOperationError } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { itemList } from '../../shared/errors';
import type { RunContext } from '../../shared/execution/operationRun';

// Send Only Between: the hours in which a message may go out, for a send (sending.ts) and for
// Wait for Send Window (its fields and their reader: sendWindowFields.ts). Time-zone arithmetic is
// Luxon's, daylight saving included.

export interface SendWindow {
	/** Minutes after midnight, `end` exclusive (1440: midnight); `end <= start` runs overnight. */
	start: number;
	end: number;
	/** Luxon weekdays: 1 = Monday … 7 = Sunday. */
	days: ReadonlySet<number>;
	timeZone: string;
}

export type WindowState = { open: true; closesAt: number } | { open: false; opensAt: number };

/** Monday … Sunday, as Luxon numbers them from 1, with the short form the Days field stores. */
export const WEEKDAYS = Info.weekdays('long', { locale: 'en' }).map(
	(name) => [name, name.slice(0, 3).toLowerCase()] as const,
);

/** A window belongs to the day it opens on: 22:00–06:00 on Fridays runs into Saturday morning. */
export function windowState(window: SendWindow, now: number): WindowState {
	const today = DateTime.fromMillis(now, { zone: window.timeZone }).startOf('day');
	// From yesterday (a window that runs past midnight may still be open) to a week ahead.
	for (let offset = -1; offset <= 7; offset++) {
		const day = today.plus({ days: offset });
		if (!window.days.has(day.weekday)) continue;
		const opens = atMinutes(day, window.start);
		const closes = atMinutes(window.end > window.start ? day : day.plus({ days: 1 }), window.end);
		if (opens <= now && now < closes) return { open: true, closesAt: closes };
		if (opens > now) return { open: false, opensAt: opens };
	}
	// Unreachable with at least one day: every week has it.
	throw new Error('The send window never opens');
}

function atMinutes(day: DateTime, minutes: number): number {
	// The next day's first moment, also where its midnight does not exist (a DST jump at 00:00).
	if (minutes === 1440) return day.plus({ days: 1 }).startOf('day').toMillis();
	return day.set({ hour: Math.floor(minutes / 60), minute: minutes % 60 }).toMillis();
}

export function describeWindow(window: SendWindow): string {
	const time = (m: number) =>
		`${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
	const named = [...window.days].sort((a, b) => a - b).map((d) => WEEKDAYS[d - 1][0].slice(0, 3));
	const days = window.days.size === 7 ? 'every day' : named.join(', ');
	return `${time(window.start)}–${time(window.end)} ${days} (${window.timeZone})`;
}

// Wait for Send Window: the run waits once, after every item is read, until every item's window
// is open at the same time.

/** n8n's wait tracker polls every 60 s: closer openings are waited for in this process. */
const SLEEP_IN_PROCESS_MS = 65_000;
const WEEK_MS = 7 * 24 * 3_600_000;
// Each step moves to a later opening; windows that overlap at all do so within a few.
const MAX_STEPS = 50;

export class WindowWait {
	private readonly windows = new Map<string, { window: SendWindow; items: number[] }>();
	private opened: Promise<void> | undefined;

	constructor(private readonly run: RunContext<unknown>) {}

	add(itemIndex: number, window: SendWindow): void {
		const key = JSON.stringify({ ...window, days: [...window.days] });
		const same = this.windows.get(key);
		if (same) same.items.push(itemIndex);
		else this.windows.set(key, { window, items: [itemIndex] });
	}

	/** One wait for the whole run, however many items await it. */
	async untilEveryWindowIsOpen(): Promise<void> {
		this.opened ??= this.hold();
		await this.opened;
	}

	private async hold(): Promise<void> {
		const now = clock.now();
		const opensAt = this.commonOpening(now);
		if (opensAt <= now) return;
		const waitMs = opensAt - now;
		if (waitMs < SLEEP_IN_PROCESS_MS) await clock.sleep(waitMs, this.run.signal);
		else await this.run.ctx.putExecutionToWait(new Date(opensAt));
	}

	/** Moves to the latest opening until every window is open at once; a week without one is refused. */
	private commonOpening(now: number): number {
		const windows = [...this.windows.values()];
		let at = now;
		for (let step = 0; step < MAX_STEPS && at - now <= WEEK_MS; step++) {
			const closed = windows
				.map(({ window }) => windowState(window, at))
				.filter((state) => !state.open);
			if (closed.length === 0) return at;
			at = Math.max(...closed.map((state) => (state.open ? at : state.opensAt)));
		}
		const items = windows.flatMap(({ items }) => items).sort((a, b) => a - b);
		const shownWindows = windows.slice(0, 3).map(({ window }) => describeWindow(window));
		const message = `The items' send windows are never open at the same time (${shownWindows.join('; ')}${windows.length > 3 ? '; …' : ''})`;
		const description = `This step passes all its items on together, so it waits until every item's window is open, and the windows of ${itemList(items)} do not overlap within a week. Split the items by time zone first (an If or Switch node), with one Wait for Send Window per branch.`;
		throw new NodeOperationError(this.run.node, message, { description });
	}
}
