/**
 * The user's data and honest outputs, through n8n's engine against the sandbox: JSON types per
 * field, number formats, files, bank rates per leg, non-finite results, what the gateway said.
 */
import type { IDataObject, INode, INodeParameters } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { sandboxQuote } from '../harness/currencyRateNode';
import { PHONE } from '../harness/messagingNode';
import { useSandbox } from '../harness/useSandbox';

const sandbox = useSandbox();

async function run(
	type: 'messaging' | 'currencyRate',
	parameters: INodeParameters,
	items: IDataObject[] = [{}],
	settings: Partial<INode> = {},
) {
	return await runWorkflow(
		singleNodeWorkflow(type, parameters, items, settings),
		sandboxCredential(sandbox.url),
	);
}

const convert = (extra: INodeParameters): INodeParameters => ({
	resource: 'rate',
	operation: 'convert',
	provider: 'bca',
	fromCurrency: 'USD',
	toCurrency: 'IDR',
	includeInputFields: false,
	...extra,
});

describe('bank rates: each leg with the side a bank customer gets', () => {
	it('100 USD → EUR at BCA: the bank buys USD and sells EUR (≈ 91.52), the average gives ≈ 92.07', async () => {
		const bank = await run(
			'currencyRate',
			convert({ amount: 100, toCurrency: 'EUR', rateType: 'bank' }),
		);
		const average = await run(
			'currencyRate',
			convert({ amount: 100, toCurrency: 'EUR', rateType: 'average' }),
		);
		const usd = sandboxQuote('bca', 'USD');
		const eur = sandboxQuote('bca', 'EUR');
		expect(bank.output('Node')[0].json).toMatchObject({
			convertedAmount: Math.round((100 * usd.buy * 100) / eur.sell) / 100,
			fromRate: usd.buy,
			toRate: eur.sell,
		});
		expect(bank.output('Node')[0].json.convertedAmount).toBeCloseTo(91.52, 2);
		expect(average.output('Node')[0].json.convertedAmount).toBeCloseTo(92.07, 2);
	});
});

describe('number formats', () => {
	it('"16.250" is refused as ambiguous, showing both readings', async () => {
		const result = await run('currencyRate', convert({ amount: '={{ $json.amount }}' }), [
			{ amount: '16.250' },
		]);
		expect(result.error?.message).toBe(
			'Field "Amount" is ambiguous: "16.250" is 16.25 with a decimal point (1,234.56) and 16250 with a decimal comma (1.234,56) [item 0]',
		);
	});

	it.each([
		['comma', '16.250', 16250],
		['point', '16.250', 16.25],
		['auto', '1.234,56', 1234.56],
		['auto', '1,234.56', 1234.56],
	])('Number Format %s reads %s as %d', async (numberFormat, text, amount) => {
		const result = await run(
			'currencyRate',
			convert({ amount: '={{ $json.amount }}', options: { numberFormat } }),
			[{ amount: text }],
		);
		expect(result.error).toBeUndefined();
		expect(result.output('Node')[0].json.amount).toBe(amount);
	});

	it('rates the gateway writes with a decimal comma ("17.597,05") are read, not dropped', async () => {
		const response = [
			{
				name: 'USD',
				rate_buy: '16.201,25',
				rate_sell: '16.298,75',
				rate_avg: '16.250,00',
				provider: 'bca',
			},
			{
				name: 'EUR',
				rate_buy: '17.597,05',
				rate_sell: '17.702,95',
				rate_avg: '17.650,00',
				provider: 'bca',
			},
		];
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { success: true, response },
				match: { rpcMethod: 'getkurs' },
				times: 2,
			},
		]);
		const get = await run('currencyRate', {
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
			currencies: 'EUR',
			output: 'perCurrency',
		});
		expect(get.output('Node')[0].json).toMatchObject({
			currency: 'EUR',
			buy: 17597.05,
			sell: 17702.95,
			average: 17650,
		});
	});
});

describe('results must be finite', () => {
	it('an amount of 1e305 converting beyond the largest number is refused', async () => {
		const result = await run('currencyRate', convert({ amount: '={{ $json.amount }}' }), [
			{ amount: 1e305 },
		]);
		expect(result.error?.message).toMatch(/^Field "Amount" is too large to convert: 1e\+305 USD/);
	});
});

describe('JSON types per field', () => {
	it.each([
		[
			'a currency given as a number',
			convert({ amount: 1, fromCurrency: '={{ $json.v }}' }),
			{ v: 840 },
			'Field "From Currency" is a number (840), not a code [item 0]',
		],
		[
			'a provider given as an array',
			convert({ amount: 1, provider: '={{ $json.v }}' }),
			{ v: ['bca'] },
			'Field "Provider" is an array (["bca"]), not a provider code [item 0]',
		],
		[
			'currencies holding null and 1',
			{ resource: 'rate', operation: 'get', provider: 'bca', currencies: '={{ $json.v }}' },
			{ v: [null, 1] },
			'Field "Currencies" holds null at position 0, not a currency code [item 0]',
		],
	] as const)('%s is refused, naming its type', async (_what, parameters, item, message) => {
		const result = await run('currencyRate', parameters as INodeParameters, [item]);
		expect(result.error?.message).toBe(message);
	});

	it('currencies null and "" both mean every currency', async () => {
		for (const v of [null, '']) {
			const result = await run(
				'currencyRate',
				{
					resource: 'rate',
					operation: 'get',
					provider: 'bca',
					currencies: '={{ $json.v }}',
					output: 'allInOne',
				},
				[{ v }],
			);
			expect(result.error).toBeUndefined();
			expect((result.output('Node')[0].json.currencies as string[]).length).toBeGreaterThan(5);
		}
	});

	it('a caption that is an object is refused instead of sent as "[object Object]"; a file name that is a number is used', async () => {
		const file = {
			resource: 'message',
			operation: 'sendFile',
			phone: PHONE,
			fileSource: 'base64',
			fileContent: 'data:application/pdf;base64,JVBERi0xLjcK',
		};
		const bad = await run('messaging', { ...file, caption: '={{ $json.c }}' }, [{ c: { a: 1 } }]);
		expect(bad.error?.message).toBe('Field "Caption" is an object ({"a":1}), not text [item 0]');
		const named = await run('messaging', { ...file, fileFields: { fileName: '={{ $json.n }}' } }, [
			{ n: 2024 },
		]);
		expect(named.error).toBeUndefined();
		expect(sandbox.ledger().map((entry) => entry.file?.filename)).toEqual(['2024']);
	});
});

describe('files', () => {
	const sendBase64 = (fileContent: string): INodeParameters => ({
		resource: 'message',
		operation: 'sendFile',
		phone: PHONE,
		fileSource: 'base64',
		fileContent,
	});

	it('application/octet-stream with the name invoice.pdf is sent as application/pdf', async () => {
		const items = [
			{
				json: {},
				binary: {
					data: {
						data: Buffer.from('%PDF-1.7').toString('base64'),
						mimeType: 'application/octet-stream',
						fileName: 'invoice.pdf',
					},
				},
			},
		];
		const result = await run(
			'messaging',
			{ resource: 'message', operation: 'sendFile', phone: PHONE },
			items as unknown as IDataObject[],
		);
		expect(result.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({
			mimeType: 'application/pdf',
			filename: 'invoice.pdf',
		});
	});

	it('a data URI whose type is not a mime type is refused clearly, before any send', async () => {
		const result = await run('messaging', sendBase64('data:pdf;base64,JVBERi0xLjcK'));
		expect(result.error?.message).toBe(
			'Field "File Content" is a data URI whose type "pdf" is not a mime type (type/subtype, e.g. application/pdf) [item 0]',
		);
		expect(sandbox.ledger()).toEqual([]);
	});

	it("a data URI's name= parameter names the file", async () => {
		const result = await run(
			'messaging',
			sendBase64('data:application/pdf;name=Invoice%20March.pdf;base64,JVBERi0xLjcK'),
		);
		expect(result.error).toBeUndefined();
		expect(sandbox.ledger()[0].file).toMatchObject({
			mimeType: 'application/pdf',
			filename: 'Invoice March.pdf',
		});
	});
});

describe('honest outputs', () => {
	const sendText = { resource: 'message', operation: 'sendText', phone: PHONE, text: 'hi' };

	it.each([
		[
			{ message: { sent: 'false', message: 'WhatsApp is not connected' } },
			/the message was not sent: "WhatsApp is not connected"/,
		],
		[{ status: 'error' }, /the message was not sent: "error"/],
	])("%j is not sent, with the gateway's words", async (result, message) => {
		sandbox.addFaults([{ kind: 'answer', result, match: { rpcMethod: 'sendMessage' }, times: 2 }]);
		const out = await run('messaging', sendText, [{}], { onError: 'continueRegularOutput' });
		expect(out.output('Node')[0].json.sent).toBeUndefined();
		expect(String(out.output('Node')[0].json.error)).toMatch(message);
	});

	it('an answer that does not say "sent" is reported as may have been delivered, never as sent', async () => {
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { message: { id: 'x1' } },
				match: { rpcMethod: 'sendMessage' },
				times: 2,
			},
		]);
		const out = await run('messaging', sendText, [{}], { onError: 'continueRegularOutput' });
		expect(out.output('Node')[0].json).toMatchObject({
			details: { kind: 'unexpected-answer', deliveryUnknown: true },
		});
	});

	it('Account → Check outputs only what the gateway said (no typed-in webhook echoed)', async () => {
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { message: { whatsapp_number: PHONE } },
				match: { rpcMethod: 'check' },
				times: 2,
			},
		]);
		const out = await run('messaging', {
			resource: 'account',
			operation: 'check',
			whatsappNumber: PHONE,
			webhookUrl: 'https://typed.example/hook',
		});
		expect(out.output('Node')[0].json.whatsappNumber).toBe(PHONE);
		expect(out.output('Node')[0].json).not.toHaveProperty('webhookUrl');
	});

	it('Number Check answering {result: "maybe"} gets a hint about the answer, not "did not answer JSON"', async () => {
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { result: 'maybe' },
				match: { path: '/api/wa/2.0/check' },
				times: 1,
			},
		]);
		const out = await run('messaging', { resource: 'number', operation: 'check', phone: PHONE });
		expect(out.error?.description).not.toMatch(/did not answer JSON/);
		expect(out.error?.description).toMatch(/not in a form this node can read/);
	});
});
