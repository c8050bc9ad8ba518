import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { clock } from '../../../shared/clock';
import { inputError } from '../../../shared/errors';
import { forOperation, type ItemCall } from '../../../shared/execution/router';
import { asOptions } from '../../../shared/optionsCollection';
import type { MessagingRun } from '../../parameters';
import {
	readSendWindow,
	sendWindowFields,
	windowState,
	type SendWindow,
} from '../../helpers/sendWindow';

/**
 * Message → Wait for Send Window: hands its items on unchanged once the window is open. Inside
 * the window at once; when it opens within `SLEEP_IN_PROCESS_MS`, after a wait in this process
 * (as n8n's Wait node does); later, the execution is put to wait until the opening: n8n keeps
 * it in its database (no worker held, a restart changes nothing) and resumes it by itself.
 *
 * Why a step of its own rather than a send that waits: n8n resumes a waiting execution with the
 * node that put it to wait disabled, passing its input on, so a send that waited would never send
 * after the wait. This step waits; the send after it runs on resume. The send's own Send Only
 * Between (the same window) is the guard that nothing goes out outside it.
 */

export const WAIT_FOR_SEND_WINDOW = 'waitForSendWindow';

/** Openings closer than this are waited for in this process; n8n's wait tracker polls every 60 s. */
export const SLEEP_IN_PROCESS_MS = 65_000;

export const description: INodeProperties[] = forOperation(
	'message',
	WAIT_FOR_SEND_WINDOW,
	sendWindowFields(),
);

/**
 * Every item passes through unchanged. The wait is the run's, once, while the first item is
 * checked: nothing is sent by this step, so waiting before the other items pass costs nothing.
 * An item whose window cannot be read fails (it is not passed on unwaited).
 */
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
	if ('problem' in window)
		throw inputError(run.node, itemIndex, window.field, window.problem, window.fix);
	if (!run.waited) {
		run.waited = true;
		await holdUntilWindow(this, run, window);
	}
	const item = this.getInputData()[itemIndex];
	return async () => ({ json: item.json, binary: item.binary });
}

/** Nothing when the window is open, a wait in this process when it opens soon, else the execution put to wait until it opens. */
async function holdUntilWindow(
	ctx: IExecuteFunctions,
	run: MessagingRun,
	window: SendWindow,
): Promise<void> {
	const now = clock.now();
	const state = windowState(window, now);
	if (state.open) return;
	const waitMs = state.opensAt - now;
	if (waitMs < SLEEP_IN_PROCESS_MS) {
		await clock.sleep(waitMs, run.signal);
		return;
	}
	await ctx.putExecutionToWait(new Date(state.opensAt));
}
