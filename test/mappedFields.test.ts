/**
 * Mapped fields through n8n's engine against the sandbox: plain `{{ $json… }}` mappings (read
 * straight from the item by the run's parameter reader) send what n8n's evaluation would give,
 * numbers and booleans mapped into a text are sent as their text, mapped Options apply to their
 * own item, and workflows with other expressions keep n8n's outputs and n8n's errors.
 */
import './harness/env';
import { probe } from './harness/parameterEquivalence';
import { runMessaging } from './harness/messagingNode';
import { useSandbox } from './harness/useSandbox';

const sandbox = useSandbox();

const sentTexts = () => sandbox.ledger().map((entry) => ({ phone: entry.phone, text: entry.text }));

describe('mapped fields', () => {
	it('sends numbers and booleans mapped into Text as their text', async () => {
		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: '={{ $json.phone }}', text: '={{ $json.n }}' },
			[
				{ phone: '+62 812-8877-6713', n: 42 },
				{ phone: '+62 812-8877-6714', n: 0 },
				{ phone: '+62 812-8877-6715', n: true },
				{ phone: '+62 812-8877-6716', n: 12.5 },
			],
		);
		expect(run.error).toBeUndefined();
		expect(sentTexts()).toEqual([
			{ phone: '6281288776713', text: '42' },
			{ phone: '6281288776714', text: '0' },
			{ phone: '6281288776715', text: 'true' },
			{ phone: '6281288776716', text: '12.5' },
		]);
	});

	it('reads keys with spaces, quotes, nested objects and array elements', async () => {
		const run = await runMessaging(
			sandbox,
			{
				resource: 'message',
				operation: 'sendText',
				phone: '={{ $json["Phone Number"] }}',
				text: "={{ $json.order['lines'][1].name }}",
				options: { defaultCountry: 'ID' },
			},
			[
				{ 'Phone Number': '0812 8877 6713', order: { lines: [{ name: 'first' }, { name: 'second' }] } },
				{ 'Phone Number': 6281288776714, order: { lines: [{ name: 'a' }, { name: 'it\'s "b"' }] } },
			],
		);
		expect(run.error).toBeUndefined();
		const nested = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: '={{ $json.customer.phone }}', text: "={{ $json['the text'] }}" },
			[{ customer: { phone: '+62 812 8877 6715' }, 'the text': 'nested' }],
		);
		expect(nested.error).toBeUndefined();
		expect(sentTexts()).toEqual([
			{ phone: '6281288776713', text: 'second' },
			{ phone: '6281288776714', text: 'it\'s "b"' },
			{ phone: '6281288776715', text: 'nested' },
		]);
	});

	it('applies a mapped Default Country to its own item only (typed-in Options are read once per run)', async () => {
		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: '={{ $json.phone }}', text: 'Hi', options: { defaultCountry: '={{ $json.cc }}' } },
			[
				{ phone: '0812 8877 6713', cc: 'ID' },
				{ phone: '(415) 555-2671', cc: 'US' },
			],
		);
		expect(run.error).toBeUndefined();
		expect(sentTexts().map((entry) => entry.phone)).toEqual(['6281288776713', '14155552671']);
	});
});

describe('other expressions keep n8n\'s results', () => {
	it('sends what n8n evaluates for expressions that are more than a path', async () => {
		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: '={{ $json.phone.trim() }}', text: '=Order {{ $json.n }} for {{ $json.name.toUpperCase() }}' },
			[{ phone: ' +62 812-8877-6713 ', n: 7, name: 'ana' }],
		);
		expect(run.error).toBeUndefined();
		expect(sentTexts()).toEqual([{ phone: '6281288776713', text: 'Order 7 for ANA' }]);
	});

	it('fails with n8n\'s own error when a mapping cannot be evaluated, and sends nothing', async () => {
		const items = [{ phone: '+62 812-8877-6713' }];
		const text = '={{ $json.constructor }}';
		const [expected] = await probe({ value: text }, items, [{ name: 'value', fallback: '' }]);
		expect('error' in expected.n8n).toBe(true);
		const run = await runMessaging(sandbox, { resource: 'message', operation: 'sendText', phone: '={{ $json.phone }}', text }, items);
		expect(run.error?.message).toBe(`${(expected.n8n as { error: string }).error} [item 0]`);
		expect(sandbox.ledger()).toEqual([]);
	});

	it('reports a missing mapped field as before (the reader hands it to n8n)', async () => {
		const run = await runMessaging(
			sandbox,
			{ resource: 'message', operation: 'sendText', phone: '={{ $json.phone }}', text: '={{ $json.missing }}' },
			[{ phone: '+62 812-8877-6713' }],
		);
		expect(run.error?.message).toBe('Field "Text" is empty [item 0]');
	});
});
