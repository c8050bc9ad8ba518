import { OperationRun } from '../shared/execution/operationRun';
import { Sender } from './helpers/sending';
import { WindowWait } from './helpers/sendWindow';
import type { MessagingOptions } from './options';

/** A Messaging node's run: its sends, and Wait for Send Window's one wait. */
export class MessagingRun extends OperationRun<MessagingOptions> {
	readonly sender = new Sender(this);
	readonly windows = new WindowWait(this);

	async checkRun(): Promise<Map<number, Error>> {
		return await this.sender.refusals();
	}

	async finish(): Promise<void> {
		await this.sender.finish();
	}

	rerunNote(): string {
		return this.sender.rerunNote();
	}
}
