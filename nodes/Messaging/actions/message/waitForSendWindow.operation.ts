import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { ItemCall } from '../../../shared/execution/router';
import { asOptions, forOperation } from '../../../shared/properties';
import type { MessagingRun } from '../../run';
import { readSendWindow, sendWindowFields } from '../../helpers/sendWindowFields';

// A step of its own: n8n resumes a waiting execution with the node that put it to wait disabled,
// passing its input on, so a send that waited would never send.

export const description: INodeProperties[] = forOperation(
	'message',
	'waitForSendWindow',
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
	run.windows.add(itemIndex, window);
	const item = this.getInputData()[itemIndex];
	return async () => {
		await run.windows.untilEveryWindowIsOpen();
		return { json: item.json, binary: item.binary };
	};
}
