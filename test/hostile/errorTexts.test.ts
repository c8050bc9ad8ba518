/**
 * A field error quotes the value it refuses, and item data can be of any size: through n8n's
 * engine, 1 MB mapped into a field gives an error of a sentence, not of a megabyte.
 */
import type { INodeParameters } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { PHONE, apiRequests } from '../harness/messagingNode';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();

const MB = 1024 * 1024;
const BIG = '={{ $json.big }}';

const cases: Array<[string, 'messaging' | 'currencyRate', INodeParameters, string]> = [
	[
		'Default Country',
		'messaging',
		{
			resource: 'message',
			operation: 'sendText',
			phone: '0812 8877 6713',
			text: 'hi',
			options: { defaultCountry: BIG },
		},
		'the default country',
	],
	[
		'MIME Type',
		'messaging',
		{
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE,
			fileSource: 'base64',
			fileContent: 'aGVsbG8=',
			fileFields: { mimeType: BIG },
		},
		'is not a mime type',
	],
	[
		'Webhook URL',
		'messaging',
		{ resource: 'account', operation: 'check', whatsappNumber: PHONE, webhookUrl: BIG },
		'is not an absolute http(s) URL',
	],
	[
		'Time Zone of Send Only Between',
		'messaging',
		{
			resource: 'message',
			operation: 'sendText',
			phone: PHONE,
			text: 'hi',
			options: { sendWindow: { window: { timeZone: BIG } } },
		},
		'is not a known time zone',
	],
	[
		'Amount',
		'currencyRate',
		{
			resource: 'rate',
			operation: 'convert',
			provider: 'bca',
			amount: BIG,
			fromCurrency: 'USD',
			toCurrency: 'IDR',
		},
		'is not a number',
	],
];

describe('field errors on 1 MB of item data', () => {
	it.each(cases)(
		'%s: the error quotes a short part of the value',
		async (_field, type, parameters, says) => {
			const big = `x${'9'.repeat(MB)}`;
			const result = await runWorkflow(
				singleNodeWorkflow(type, parameters, [{ big }]),
				sandboxCredential(sandbox.url),
			);
			expect(result.error?.message).toContain(says);
			expect(result.error?.message.length).toBeLessThan(400);
			expect(apiRequests(sandbox).filter((r) => !r.path.endsWith('authentication'))).toEqual([]);
		},
	);
});

describe('a value cut where a character of two UTF-16 units stands', () => {
	// Half of a pair is no character: n8n stores and shows it as U+FFFD or an escape, never the emoji.
	const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
	const ESCAPED_SURROGATE = /\\ud[89a-f][0-9a-f]{2}/i;
	const emojiAt = (at: number) => `${'x'.repeat(at)}😀${'y'.repeat(80)}`;

	it.each([
		// An object quoted as JSON: `{"note":"` is 9 characters, so the emoji's first half is the 60th.
		['Text (an object)', { phone: PHONE, text: '={{ $json.value }}' }, { note: emojiAt(50) }],
		// A text quoted as a JSON string: its first half is the 60th character of the value.
		['Default Country (text)', { options: { defaultCountry: '={{ $json.value }}' } }, emojiAt(59)],
	] as const)('%s: the quote ends before the emoji or after it', async (_field, fields, value) => {
		const result = await runWorkflow(
			singleNodeWorkflow(
				'messaging',
				{
					resource: 'message',
					operation: 'sendText',
					phone: '0812 8877 6713',
					text: 'hi',
					...fields,
				},
				[{ value }],
			),
			sandboxCredential(sandbox.url),
		);
		const message = result.error?.message ?? '';
		expect(message).toMatch(/^Field "/);
		expect(message).toContain('…');
		expect(message).not.toMatch(LONE_SURROGATE);
		expect(message).not.toMatch(ESCAPED_SURROGATE);
		expect(apiRequests(sandbox).filter((r) => !r.path.endsWith('authentication'))).toEqual([]);
	});
});
