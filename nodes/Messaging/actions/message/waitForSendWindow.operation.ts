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

// A step of its own: n8n resumes a waiting execution with the node that put it to wait disabled,
// passing its input on, so a send that waited would never send.

export const WAIT_FOR_SEND_WINDOW = 'waitForSendWindow';

/** n8n's wait tracker polls every 60 s: closer openings are waited for in this process. */
export const SLEEP_IN_PROCESS_MS = 65_000;

export const description: INodeProperties[] = forOperation(
	'message',
	WAIT_FOR_SEND_WINDOW,
	sendWindowFields(),
);

/** The run waits once: this step sends nothing, so the other items lose nothing by waiting. */
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
