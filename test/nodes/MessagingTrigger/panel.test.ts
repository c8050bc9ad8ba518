/**
 * What n8n's editor makes of the trigger's description (n8n 2.40.7's editor code, read in its
 * bundle: the node creator's trigger actions and its merge of a trigger into its action node):
 * the one-webhook notice, the trigger panel's texts, the event's name, and the description n8n
 * shows for the Messaging entry (the picker's rules: test/cross-cutting/editor.description.test.ts).
 * The notice's rendering in real n8n is in the editor test.
 */
import { NodeHelpers, type INodeParameters, type INodeProperties } from 'n8n-workflow';

import { Messaging } from '../../../nodes/Messaging/Messaging.node';
import { MessagingTrigger } from '../../../nodes/MessagingTrigger/MessagingTrigger.node';

const trigger = new MessagingTrigger().description;
const messaging = new Messaging().description;

/** The node creator's rule: a property named Event, Events or Trigger On lists the trigger's actions. */
function creatorActions(properties: INodeProperties[]): string[] {
	const events = properties.find((property) =>
		['event', 'events', 'trigger on'].includes(property.displayName.toLowerCase()),
	);
	if (!events?.options)
		return [`On new ${trigger.displayName.replace('Trigger', '').trimEnd()} event`];
	return events.options.map((option) =>
		'action' in option && option.action ? option.action : `On ${option.name}`,
	);
}

function parametersOf(version: number, parameters: INodeParameters = {}): INodeParameters {
	return (
		NodeHelpers.getNodeParameters(
			trigger.properties,
			parameters,
			true,
			false,
			{ typeVersion: version } as never,
			trigger,
		) ?? {}
	);
}

describe('the trigger panel', () => {
	it('shows a notice (a plain notice property) that the account has one webhook and a second workflow takes it over', () => {
		const notice = trigger.properties.find((property) => property.type === 'notice');
		expect(notice).toBeDefined();
		expect(notice?.displayOptions).toBeUndefined();
		expect(notice?.displayName).toMatch(/one webhook per account/);
		expect(notice?.displayName).toMatch(
			/Publishing \(n8n 2\.x\) or activating \(1\.x\) this workflow points the account's webhook here/,
		);
		expect(notice?.displayName).toMatch(
			/second workflow published \(or activated\) on this account/,
		);
	});

	it('tells what to do while listening, instead of n8n\'s generic "Go to Messaging and create an event"', () => {
		expect(trigger.triggerPanel).toMatchObject({
			header: 'Send a WhatsApp message to the account number to see it here',
		});
		const panel = trigger.triggerPanel as { executionsHelp: { active: string; inactive: string } };
		expect(panel.executionsHelp.inactive).toMatch(/send a WhatsApp message to the account number/);
		expect(panel.executionsHelp.active).toMatch(
			/messages go to the editor, not to the published workflow \(n8n 1\.x: active\)/,
		);
	});

	it('names its event after what happens, not "On new Messaging event"', () => {
		expect(creatorActions(trigger.properties)).toEqual(['On WhatsApp message received']);
	});

	it("carries Messaging's description, which n8n's picker shows for both", () => {
		// n8n merges a trigger into the action node whose name is the trigger's without "Trigger".
		expect(trigger.name.replace('Trigger', '')).toBe(messaging.name);
		expect(trigger.description).toBe(messaging.description);
	});
});

describe('defaults', () => {
	it('a new trigger verifies with a generated secret and ignores its own messages', () => {
		expect(trigger.version).toBe(1);
		expect(parametersOf(1)).toMatchObject({
			verification: 'generatedSecret',
			ignoreOwnMessages: true,
		});
		expect(parametersOf(1, { verification: 'querySecret' })).toMatchObject({
			verification: 'querySecret',
		});
	});
});
