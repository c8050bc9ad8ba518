import { DateTime, IANAZone, Info } from 'luxon';
import { NodeOperationError, type IDataObject, type INodeProperties } from 'n8n-workflow';

import { clock } from '../../shared/clock';
import { itemList, shown } from '../../shared/errors';
import type { RunContext } from '../../shared/execution/operationRun';

// Send Only Between: the hours in which a message may go out, for a send (sending.ts) and for
// Wait for Send Window. Time-zone arithmetic is Luxon's, daylight saving included.

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
const WEEKDAYS = Info.weekdays('long', { locale: 'en' }).map(
	(name) => [name, name.slice(0, 3).toLowerCase()] as const,
);

export function sendWindowFields(): INodeProperties[] {
	return [
		{
			displayName: 'Start',
			name: 'start',
			type: 'string',
			default: '08:00',
			placeholder: '08:00',
			description: 'When the window opens each day, as HH:MM (24-hour clock) in the time zone',
		},
		{
			displayName: 'End',
			name: 'end',
			type: 'string',
			default: '20:00',
			placeholder: '20:00',
			description:
				'When the window closes, as HH:MM; earlier than Start means the next day (22:00 to 06:00 runs overnight)',
		},
		{
			displayName: 'Days',
			name: 'days',
			type: 'multiOptions',
			options: WEEKDAYS.map(([name, value]) => ({ name, value })),
			default: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
			description: 'The days on which the window opens',
		},
		{
			displayName: 'Time Zone',
			name: 'timeZone',
			type: 'string',
			default: '',
			placeholder: 'Asia/Jakarta',
			description:
				"An IANA time zone such as Asia/Jakarta or Europe/Berlin. Empty: the workflow's time zone (Settings), else n8n's (GENERIC_TIMEZONE).",
		},
	];
}

export type WindowProblem = { field: string; problem: string; fix: string };

export function readSendWindow(
	fields: IDataObject,
	fallbackZone: string,
): SendWindow | WindowProblem {
	const start = minutesOf(fields.start ?? '08:00');
	if (start === undefined)
		return {
			field: 'Start',
			problem: `is not a time of day (${shown(fields.start)})`,
			fix: 'Write it as HH:MM on a 24-hour clock, e.g. 08:00.',
		};
	const end = minutesOf(fields.end ?? '20:00');
	if (end === undefined)
		return {
			field: 'End',
			problem: `is not a time of day (${shown(fields.end)})`,
			fix: 'Write it as HH:MM on a 24-hour clock, e.g. 20:00 (24:00 for midnight).',
		};
	if (start % 1440 === end % 1440 && !(start === 0 && end === 1440))
		return {
			field: 'End',
			problem: 'is the same as Start, so the window never opens',
			fix: 'Give the window a length, or remove Send Only Between to send at any time.',
		};
	const dayValues = daysGiven(fields.days);
	if (!dayValues)
		return {
			field: 'Days',
			problem: `is not a list of days (${shown(fields.days)})`,
			fix: 'Pick days from the list, or map text such as "mon,tue,wed".',
		};
	const days = new Set<number>();
	for (const value of dayValues) {
		const index = WEEKDAYS.findIndex(
			([name, day]) =>
				typeof value === 'string' && [day, name.toLowerCase()].includes(value.toLowerCase()),
		);
		if (index < 0)
			return {
				field: 'Days',
				problem: `holds ${shown(value)}, which is no day`,
				fix: `Pick days from the list (${WEEKDAYS.map(([, day]) => day).join(', ')}).`,
			};
		days.add(index + 1);
	}
	if (days.size === 0)
		return {
			field: 'Days',
			problem: 'is empty, so the window never opens',
			fix: 'Pick at least one day.',
		};
	const given = typeof fields.timeZone === 'string' ? fields.timeZone.trim() : '';
	const timeZone = given || fallbackZone;
	if (!IANAZone.isValidZone(timeZone))
		return {
			field: 'Time Zone',
			problem: `is not a known time zone (${shown(timeZone)})`,
			fix: 'Use an IANA name such as Asia/Jakarta, Europe/Berlin or UTC.',
		};
	return { start: start % 1440, end, days, timeZone };
}

/** Not given: every day. Text (a mapped "mon,tue,wed") is split, never taken as every day. */
function daysGiven(value: unknown): unknown[] | undefined {
	if (value === undefined || value === null) return WEEKDAYS.map(([, day]) => day);
	if (Array.isArray(value)) return value;
	if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
	return undefined;
}

function minutesOf(value: unknown): number | undefined {
	if (typeof value !== 'string') return undefined;
	const match = /^([01]?\d|2[0-4]):([0-5]\d)$/.exec(value.trim());
	if (!match) return undefined;
	const minutes = Number(match[1]) * 60 + Number(match[2]);
	return minutes <= 1440 ? minutes : undefined;
}

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
		throw new NodeOperationError(
			this.run.node,
			`The items' send windows are never open at the same time (${shownWindows.join('; ')}${windows.length > 3 ? '; …' : ''})`,
			{
				description: `This step passes all its items on together, so it waits until every item's window is open, and the windows of ${itemList(items)} do not overlap within a week. Split the items by time zone first (an If or Switch node), with one Wait for Send Window per branch.`,
			},
		);
	}
}
