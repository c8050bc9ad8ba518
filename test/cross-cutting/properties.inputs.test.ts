/**
 * Property-based tests over the inputs users type or map (fast-check): phone numbers, texts,
 * file names, base64 and data URIs, currency codes and amounts. Each generated batch runs
 * through n8n's engine against the sandbox with Continue On Fail, and every item must come out,
 * in order, as a result or as an error that names its item (and the field, for bad input):
 * never an uncaught exception, a lost item or a hang.
 */
import fc from 'fast-check';
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../harness/engine';
import { useSandbox } from '../harness/useSandbox';
import { useVirtualTime } from '../harness/virtualTime';

// No reset between properties: every batch is checked on its own output.
const sandbox = useSandbox({}, { resetEachTest: false });
// The pause between messages (a new node's default) takes virtual time.
useVirtualTime();

const RUNS = 15;

/** Runs one batch and checks the universal property; returns the output for extra checks. */
async function runBatch(
	type: 'messaging' | 'currencyRate',
	parameters: INodeParameters,
	items: IDataObject[],
	fields: string[],
): Promise<INodeExecutionData[]> {
	const run = await runWorkflow(
		singleNodeWorkflow(type, parameters, items, { continueOnFail: true }),
		sandboxCredential(sandbox.url),
	);
	expect(run.error).toBeUndefined();
	const output = run.output('Node');
	expect(output).toHaveLength(items.length);
	output.forEach((item, index) => {
		expect(item.pairedItem).toEqual({ item: index });
		if (item.json.error !== undefined) {
			const message = String(item.json.error);
			expect(message).toContain(`[item ${index}]`);
			// Bad input names its field; anything else is the gateway's answer, which names the endpoint.
			const namesField = fields.some((field) => message.includes(`Field "${field}"`));
			const namesEndpoint = /\((GET|POST) \/api\//.test(message);
			expect(namesField || namesEndpoint).toBe(true);
			expect(message).not.toContain('demo-secret');
		}
	});
	if (process.env.DEBUG_PROPS)
		console.log(
			parameters.operation,
			output
				.map((o) => (o.json.error ? `E:${String(o.json.error).slice(0, 90)}` : 'ok'))
				.join(' | '),
		);
	return output;
}

const digits = (min: number, max: number) =>
	fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

const phones = fc.oneof(
	digits(0, 20),
	digits(8, 12).map((d) => `+62 ${d}`),
	digits(8, 12).map((d) => `0${d}`),
	fc.tuple(digits(2, 3), digits(3, 4), digits(4, 4)).map(([a, b, c]) => `+${a} (${b}) ${c}-${c}`),
	fc.string({ maxLength: 20 }),
	fc.constantFrom(
		'',
		' ',
		'+',
		'++62',
		'tel:+6281288776713',
		'+62 812-8877-6713',
		'6281288776713',
		'0812 8877 6713',
		'١٢٣٤٥٦٧٨٩٠',
	),
);

const texts = fc.oneof(
	fc.constant(''),
	fc.string({ unit: 'grapheme', maxLength: 200 }),
	fc.string({ unit: 'binary', maxLength: 200 }),
	fc.constantFrom(
		'👋🏽 Halo! 🇮🇩',
		'مرحبا بالعالم',
		'שלום עולם',
		'\u202Eevil\u202C',
		'a\u0000b',
		'   ',
	),
	fc.constant('x'.repeat(64 * 1024)),
);

describe('Messaging inputs', () => {
	test('Send Text: any phone and text → a sent message or a named error', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.record({ phone: phones, text: texts }), { minLength: 1, maxLength: 25 }),
				async (items) => {
					const output = await runBatch(
						'messaging',
						{
							resource: 'message',
							operation: 'sendText',
							phone: '={{ $json.phone }}',
							text: '={{ $json.text }}',
							options: { defaultCountry: 'ID' },
						},
						items,
						['Phone Number', 'Text'],
					);
					output.forEach((item, i) => {
						if (item.json.sent === true)
							expect(
								sandbox.ledger().some((e) => e.id === item.json.id && e.text === items[i].text),
							).toBe(true);
					});
				},
			),
			{ numRuns: RUNS },
		);
	});

	const base64 = fc
		.uint8Array({ minLength: 0, maxLength: 300 })
		.map((b) => Buffer.from(b).toString('base64'));
	const fileContents = fc.oneof(
		base64,
		base64.map((b) => b.slice(0, Math.max(0, b.length - 1))), // truncated
		base64.map((b) => b.replace(/=+$/, '')), // padding dropped
		base64.map((b) => `${b}=`), // wrong padding
		base64.map((b) => b.replace(/\+/g, '-').replace(/\//g, '_')), // url-safe alphabet
		base64.map((b) => `data:image/png;base64,${b}`),
		base64.map((b) => `data:;base64,${b}`),
		base64.map((b) => `data:text/plain,${b}`), // not base64-marked
		fc.string({ maxLength: 50 }),
	);
	const fileNames = fc.oneof(
		fc.string({ unit: 'grapheme', maxLength: 40 }),
		fc.constantFrom('', 'a.pdf', '../../etc/passwd', 'résumé 2026.docx', 'x'.repeat(300)),
	);

	test('Send File (base64 text): any content and file name → a sent file or a named error', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.record({ content: fileContents, name: fileNames }), {
					minLength: 1,
					maxLength: 20,
				}),
				async (items) => {
					const output = await runBatch(
						'messaging',
						{
							resource: 'message',
							operation: 'sendFile',
							phone: '+62 812-8877-6713',
							fileSource: 'base64',
							fileContent: '={{ $json.content }}',
							fileFields: { fileName: '={{ $json.name }}' },
						},
						items,
						['File Content', 'File Name', 'MIME Type', 'Phone Number'],
					);
					output.forEach((item) => {
						if (item.json.sent === true)
							expect(sandbox.ledger().some((e) => e.id === item.json.id && e.kind === 'file')).toBe(
								true,
							);
					});
				},
			),
			{ numRuns: RUNS },
		);
	});
});

describe('Currency Rate inputs', () => {
	const codes = fc.oneof(
		fc.constantFrom('USD', 'eur', ' sgd ', 'IDR', 'idr', 'XYZ', '', 'US D', '€', 'usd,eur'),
		fc.string({ maxLength: 6 }),
	);
	const amounts = fc.oneof(
		fc.double(),
		fc.integer(),
		fc.constantFrom('1234.50', '12,5', '', ' 3 ', '1e309', '-0', 'NaN', 'Infinity', '0x10', '١٢٣'),
		fc.string({ maxLength: 10 }),
	);

	test('Convert: any amount and currency codes → a number or a named error', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.record({ amount: amounts, from: codes, to: codes }), {
					minLength: 1,
					maxLength: 30,
				}),
				async (items) => {
					const output = await runBatch(
						'currencyRate',
						{
							resource: 'rate',
							operation: 'convert',
							provider: 'bca',
							amount: '={{ $json.amount }}',
							fromCurrency: '={{ $json.from }}',
							toCurrency: '={{ $json.to }}',
						},
						items,
						['Amount', 'From Currency', 'To Currency', 'Decimal Places'],
					);
					output.forEach((item) => {
						if (item.json.error === undefined)
							expect(Number.isFinite(item.json.convertedAmount)).toBe(true);
					});
				},
			),
			{ numRuns: RUNS },
		);
	});

	test('Get: any currency list → rates or a named error', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(
					fc.record({
						currencies: fc.oneof(
							codes,
							fc.array(codes, { maxLength: 4 }).map((c) => c.join(',')),
						),
					}),
					{ minLength: 1, maxLength: 20 },
				),
				async (items) => {
					const run = await runWorkflow(
						singleNodeWorkflow(
							'currencyRate',
							{
								resource: 'rate',
								operation: 'get',
								provider: 'bca',
								currencies: '={{ $json.currencies }}',
								output: 'allInOne',
							},
							items,
							{ continueOnFail: true },
						),
						sandboxCredential(sandbox.url),
					);
					expect(run.error).toBeUndefined();
					const output = run.output('Node');
					expect(output).toHaveLength(items.length);
					output.forEach((item, index) => {
						if (item.json.error !== undefined) {
							expect(String(item.json.error)).toContain(`[item ${index}]`);
							expect(String(item.json.error)).toContain('Field "Currencies"');
						}
					});
				},
			),
			{ numRuns: RUNS },
		);
	});
});
