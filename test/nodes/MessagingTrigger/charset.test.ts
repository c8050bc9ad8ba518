/**
 * The body's declared charset, through n8n-core's webhook context behind a server that reads
 * bodies as n8n does (n8n parses a version 1 node's body before it runs).
 * Real n8n 2.40.7 and 1.123.81 run the latin1 case too (test/n8n/scenarios/messaging-trigger.ts).
 */
import { useSandbox } from '../../harness/useSandbox';
import { TRIGGER_CUSTOMER as CUSTOMER, useTrigger } from '../../harness/messagingTriggerNode';

describe('Messaging Trigger', () => {
	const sandbox = useSandbox({}, { resetEachTest: false });
	const trigger = useTrigger(sandbox);
	beforeAll(async () => await trigger.activate());

	it.each(['application/json', 'text/plain', 'application/octet-stream'])(
		'a latin1 body sent as %s: José stays José',
		async (contentType) => {
			const { answer, executions } = await trigger.deliver({
				sender: CUSTOMER,
				senderName: 'José',
				message: 'Olá, São Paulo',
				charset: 'latin1',
				headers: { 'content-type': `${contentType}; charset=latin1` },
			});
			expect(answer.status).toBe(200);
			expect(executions[0].receivedItems[0].json).toMatchObject({
				senderName: 'José',
				text: 'Olá, São Paulo',
			});
		},
	);

	it('a body in a charset only the node reads (windows-1252, as octet-stream): read in it', async () => {
		const { executions } = await trigger.deliver({
			sender: CUSTOMER,
			senderName: 'José',
			message: 'Grüße',
			charset: 'latin1',
			headers: { 'content-type': 'application/octet-stream; charset=windows-1252' },
		});
		expect(executions[0].receivedItems[0].json).toMatchObject({
			senderName: 'José',
			text: 'Grüße',
		});
	});

	it.each([
		'application/octet-stream;charset=latin1',
		'application/octet-stream; Charset = "latin1"',
	])('the charset however the header spaces or quotes it (%s)', async (contentType) => {
		const { executions } = await trigger.deliver({
			sender: CUSTOMER,
			message: 'Olá, São Paulo',
			charset: 'latin1',
			headers: { 'content-type': contentType },
		});
		expect(executions[0].receivedItems[0].json.text).toBe('Olá, São Paulo');
	});

	it('a UTF-8 body that begins with a byte-order mark is read, the mark dropped', async () => {
		const { answer, executions } = await trigger.deliver({
			rawBody: `\uFEFF${JSON.stringify({ params: { sender: CUSTOMER, message: 'Hi' } })}`,
			headers: { 'content-type': 'application/octet-stream' },
		});
		expect(answer.status).toBe(200);
		expect(executions[0].receivedItems[0].json).toMatchObject({ sender: CUSTOMER, text: 'Hi' });
	});

	it('a UTF-16 body', async () => {
		const { executions } = await trigger.deliver({
			sender: CUSTOMER,
			message: 'Grüße ✓',
			charset: 'utf-16le',
		});
		expect(executions[0].receivedItems[0].json.text).toBe('Grüße ✓');
	});
});
