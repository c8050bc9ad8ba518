import { NodeOperationError, type IExecuteFunctions, type INodeProperties } from 'n8n-workflow';

import { clock } from '../../../shared/clock';
import { itemList } from '../../../shared/errors';
import type { ItemCall } from '../../../shared/execution/router';
import { asOptions, forOperation } from '../../../shared/properties';
import type { MessagingRun } from '../../parameters';
import {
	describeWindow,
	readSendWindow,
	sendWindowFields,
	windowState,
	type SendWindow,
} from '../../helpers/pacing';

// A step of its own: n8n resumes a waiting execution with the node that put it to wait disabled,
// passing its input on, so a send that waited would never send.

export const WAIT_FOR_SEND_WINDOW = 'waitForSendWindow';

/** n8n's wait tracker polls every 60 s: closer openings are waited for in this process. */
const SLEEP_IN_PROCESS_MS = 65_000;
const WEEK_MS = 7 * 24 * 3_600_000;
// Each step moves to a later opening; windows that overlap at all do so within a few.
const MAX_STEPS = 50;

export const description: INodeProperties[] = forOperation(
	'message',
	WAIT_FOR_SEND_WINDOW,
	sendWindowFields(),
);

/** The run waits once, after every item is read: until every item's window is open. */
export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	run: MessagingRun,
): Promise<ItemCall> {
	const fields = Object.fromEntries(
		['start', 'end', 'days', 'timeZone'].map((name) => [
			name,
			run.parameter(name, itemIndex, undefined),
		]),
	);
	const window = readSendWindow(asOptions(fields), this.getTimezone());
	if ('problem' in window) throw run.fail(itemIndex, window.field, window.problem, window.fix);
	const key = JSON.stringify({ ...window, days: [...window.days] });
	const same = run.sendWindows.get(key);
	if (same) same.items.push(itemIndex);
	else run.sendWindows.set(key, { window, items: [itemIndex] });
	const item = this.getInputData()[itemIndex];
	return async () => {
		run.windowsOpen ??= holdUntilEveryWindow(this, run);
		await run.windowsOpen;
		return { json: item.json, binary: item.binary };
	};
}

async function holdUntilEveryWindow(ctx: IExecuteFunctions, run: MessagingRun): Promise<void> {
	const now = clock.now();
	const opensAt = commonOpening([...run.sendWindows.values()], now, run);
	if (opensAt <= now) return;
	const waitMs = opensAt - now;
	if (waitMs < SLEEP_IN_PROCESS_MS) {
		await clock.sleep(waitMs, run.signal);
		return;
	}
	await ctx.putExecutionToWait(new Date(opensAt));
}

/** Moves to the latest opening until every window is open at once; a week without one is refused. */
function commonOpening(
	windows: Array<{ window: SendWindow; items: number[] }>,
	now: number,
	run: MessagingRun,
): number {
	let at = now;
	for (let step = 0; step < MAX_STEPS && at - now <= WEEK_MS; step++) {
		const closed = windows
			.map(({ window }) => windowState(window, at))
			.filter((state) => !state.open);
		if (closed.length === 0) return at;
		at = Math.max(...closed.map((state) => (state.open ? at : state.opensAt)));
	}
	const items = windows.flatMap(({ items }) => items).sort((a, b) => a - b);
	const shown = windows.slice(0, 3).map(({ window }) => describeWindow(window));
	throw new NodeOperationError(
		run.node,
		`The items' send windows are never open at the same time (${shown.join('; ')}${windows.length > 3 ? '; …' : ''})`,
		{
			description: `This step passes all its items on together, so it waits until every item's window is open, and the windows of ${itemList(items)} do not overlap within a week. Split the items by time zone first (an If or Switch node), with one Wait for Send Window per branch.`,
		},
	);
}
