/**
 * Currency Rate → Rate → Get through n8n's engine against the sandbox: the request the sandbox
 * received, the items the node put out, and the errors of bad inputs.
 */
import { useSandbox } from '../../../harness/useSandbox';
import {
	RATES_PATH,
	RATE_TOKEN_PATH,
	expectOneRatesRequest,
	jsonOf,
	requestsTo,
	runCurrencyRate,
	sandboxCodes,
	sandboxQuote,
} from '../../../harness/currencyRateNode';
import { runWorkflow, sandboxCredential, singleNodeWorkflow } from '../../../harness/engine';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const sandbox = useSandbox();

describe('rate → get', () => {
	it('returns one item per chosen currency, numbers as numbers, from one bearer request', async () => {
		const before = Date.now();
		const { output, error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
			currencies: 'usd, EUR;sgd',
		});
		expect(error).toBeUndefined();

		expectOneRatesRequest(sandbox, 'bca');
		const [tokenRequest] = requestsTo(sandbox, RATE_TOKEN_PATH);
		expect(tokenRequest.authorization).toBeUndefined();
		expect(tokenRequest.params).toEqual({ client_id: 'demo-client', client_secret: 'demo-secret' });

		const items = output('Node');
		expect(items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 0 }, { item: 0 }]);
		const json = jsonOf(items);
		expect(json.map((j) => j.currency)).toEqual(['USD', 'EUR', 'SGD']);
		// BCA's USD in the sandbox: mid 16250 with a 0.6 % spread.
		expect(json[0]).toEqual({
			provider: 'bca',
			currency: 'USD',
			baseCurrency: 'IDR',
			buy: 16201.25,
			sell: 16298.75,
			average: 16250,
			fetchedAt: expect.stringMatching(ISO_DATE),
		});
		expect(json[1]).toMatchObject({ currency: 'EUR', ...sandboxQuote('bca', 'EUR') });
		expect(json[2]).toMatchObject({ currency: 'SGD', ...sandboxQuote('bca', 'SGD') });
		const fetchedAt = Date.parse(json[0].fetchedAt as string);
		expect(fetchedAt).toBeGreaterThanOrEqual(before - 1);
		expect(fetchedAt).toBeLessThanOrEqual(Date.now());
	});

	it('returns every currency the provider offers when none are chosen', async () => {
		const { output, error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'kmk',
		});
		expect(error).toBeUndefined();
		expectOneRatesRequest(sandbox, 'kmk');
		const json = jsonOf(output('Node'));
		expect(json.map((j) => j.currency)).toEqual(sandboxCodes('kmk'));
		// The tax office quotes one value: buy, sell and average agree.
		for (const j of json) {
			expect(j.buy).toBe(j.sell);
			expect(j.average).toBe(j.buy);
		}
	});

	it('holds all rates in one item when asked, and parses rates the server sends as strings (cimb)', async () => {
		const { output, error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'cimb',
			currencies: 'USD,EUR,SGD',
			output: 'allInOne',
		});
		expect(error).toBeUndefined();
		expectOneRatesRequest(sandbox, 'cimb');
		const items = output('Node');
		expect(items).toHaveLength(1);
		expect(items[0].pairedItem).toEqual({ item: 0 });
		expect(items[0].json).toEqual({
			provider: 'cimb',
			baseCurrency: 'IDR',
			fetchedAt: expect.stringMatching(ISO_DATE),
			currencies: ['USD', 'EUR', 'SGD'],
			rates: {
				USD: sandboxQuote('cimb', 'USD'),
				EUR: sandboxQuote('cimb', 'EUR'),
				SGD: sandboxQuote('cimb', 'SGD'),
			},
		});
		const usd = (items[0].json.rates as Record<string, Record<string, unknown>>).USD;
		expect(typeof usd.buy).toBe('number');
		expect(typeof usd.sell).toBe('number');
		expect(typeof usd.average).toBe('number');
	});

	it('takes the provider and currencies from expressions, any code, one request per provider for all items', async () => {
		const items = [
			{ provider: 'BRI', wanted: ['usd'] },
			{ provider: 'bni', wanted: 'chf' },
			{ provider: 'bri', wanted: 'sar' },
		];
		const { output, error } = await runCurrencyRate(
			sandbox,
			{
				resource: 'rate',
				operation: 'get',
				provider: '={{ $json.provider }}',
				currencies: '={{ $json.wanted }}',
			},
			items,
		);
		expect(error).toBeUndefined();
		const rateRequests = requestsTo(sandbox, '/api/rate/1.0/get');
		expect(rateRequests.map((r) => r.params?.currency_id_provider).sort()).toEqual(['bni', 'bri']);
		expect(requestsTo(sandbox, RATE_TOKEN_PATH)).toHaveLength(1);
		const out = output('Node');
		expect(out.map((item) => [item.json.provider, item.json.currency, item.pairedItem])).toEqual([
			['bri', 'USD', { item: 0 }],
			['bni', 'CHF', { item: 1 }],
			['bri', 'SAR', { item: 2 }],
		]);
	});

	it('sends the version and labels the base currency from the options', async () => {
		const { output, error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
			currencies: 'USD',
			options: { version: '1.1', baseCurrency: 'idr' },
		});
		expect(error).toBeUndefined();
		expectOneRatesRequest(sandbox, 'bca', '1.1');
		expect(output('Node')[0].json.baseCurrency).toBe('IDR');
	});

	it('sends a code typed under "Other Provider" as currency_id_provider', async () => {
		const { output, error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'other',
			providerCode: ' BNI ',
			currencies: 'HKD',
		});
		expect(error).toBeUndefined();
		expectOneRatesRequest(sandbox, 'bni');
		expect(jsonOf(output('Node'))).toEqual([
			expect.objectContaining({ provider: 'bni', currency: 'HKD', ...sandboxQuote('bni', 'HKD') }),
		]);
	});
});

describe('rate → get: bad inputs and refusals', () => {
	it('names the item and field and lists the offered codes for an unknown currency', async () => {
		const { error, output } = await runCurrencyRate(
			sandbox,
			{ resource: 'rate', operation: 'get', provider: 'bri', currencies: '={{ $json.wanted }}' },
			[{ wanted: 'USD' }, { wanted: 'usd, xyz' }],
		);
		expect(output('Node')).toEqual([]);
		expect(error?.message).toBe(
			`Field "Currencies" holds "XYZ", which provider "bri" does not offer; it offers ${sandboxCodes('bri').join(', ')} [item 1]`,
		);
		expect(error?.description).toContain('Use one of the listed codes');
		// Both items needed bri: one request, however many items failed.
		expectOneRatesRequest(sandbox, 'bri');
	});

	it('says that the base currency has no rate of its own', async () => {
		const { error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
			currencies: 'USD, IDR',
		});
		expect(error?.message).toBe(
			'Field "Currencies" holds "IDR", the base currency: every rate is an amount of IDR [item 0]',
		);
	});

	it("reports a provider the service does not know with the server's words, and lists known codes", async () => {
		const { error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: '={{ "Mandiri" }}',
		});
		expect(error?.message).toBe(
			'Get Rates (GET /api/rate/1.0/get function=getkurs) failed: the server refused the request: "Unknown provider: mandiri" [item 0]',
		);
		expect(error?.description).toContain(
			'The service gave no rates for provider "mandiri". Check the provider code (known codes: bca, bni, bri, cimb, kmk)',
		);
		expectOneRatesRequest(sandbox, 'mandiri');
	});

	it('does not blame the provider when the token request fails (wrong secret)', async () => {
		const { error } = await runWorkflow(
			singleNodeWorkflow('currencyRate', { resource: 'rate', operation: 'get', provider: 'bca' }),
			sandboxCredential(sandbox.url, { clientSecret: 'not-the-secret' }),
		);
		expect(error?.message).toBe(
			'Authenticate (rates) (GET /api/rate/1.0/authentication) failed: the server answered an error: "Odoo Server Error: Access Denied" [item 0]',
		);
		expect(error?.description ?? '').not.toContain('provider');
		expect(`${error?.message} ${error?.description}`).not.toContain('not-the-secret');
		expect(requestsTo(sandbox, '/api/rate/1.0/get')).toEqual([]);
	});

	it('rejects a provider code that is not a code before sending anything', async () => {
		const { error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'other',
			providerCode: 'bank central',
		});
		expect(error?.message).toBe(
			'Field "Provider Code" is not a provider code: "bank central" [item 0]',
		);
		expect(sandbox.requests()).toEqual([]);
	});

	it("turns a JSON-RPC error answer into a clear error with the server's words", async () => {
		sandbox.addFaults([
			{ kind: 'rpcError', match: { path: '/api/rate/1.0/get' }, message: 'Odoo Server Error' },
		]);
		const { error } = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'get',
			provider: 'bca',
		});
		expect(error?.message).toMatch(
			/^Get Rates \(GET \/api\/rate\/1\.0\/get function=getkurs\) failed: the server answered an error.*Odoo Server Error.*\[item 0\]$/,
		);
	});

	it('with Continue On Fail, puts an error item in place of each failing item and keeps the others', async () => {
		const { error, output } = await runCurrencyRate(
			sandbox,
			{
				resource: 'rate',
				operation: 'get',
				provider: '={{ $json.provider }}',
				currencies: 'USD',
				output: 'allInOne',
			},
			[{ provider: 'bca' }, { provider: 'nobank' }, { provider: 'kmk' }, { provider: 'nobank' }],
			{ continueOnFail: true },
		);
		expect(error).toBeUndefined();
		const items = output('Node');
		expect(items.map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
			{ item: 3 },
		]);
		// The refusal is shared: one request for nobank, however many items need it.
		expect(
			requestsTo(sandbox, RATES_PATH)
				.map((request) => request.params?.currency_id_provider)
				.sort(),
		).toEqual(['bca', 'kmk', 'nobank']);
		expect(items[3].json.error).toBe(
			'Get Rates (GET /api/rate/1.0/get function=getkurs) failed: the server refused the request: "Unknown provider: nobank" [item 3]',
		);
		expect(items[0].json).toMatchObject({
			provider: 'bca',
			rates: { USD: sandboxQuote('bca', 'USD') },
		});
		expect(items[1].json).toMatchObject({
			error:
				'Get Rates (GET /api/rate/1.0/get function=getkurs) failed: the server refused the request: "Unknown provider: nobank" [item 1]',
			details: { kind: 'rejected', serverMessage: 'Unknown provider: nobank' },
		});
		expect(items[2].json).toMatchObject({
			provider: 'kmk',
			rates: { USD: sandboxQuote('kmk', 'USD') },
		});
	});
});

describe('rate → get: reading the answer', () => {
	/** The provider's next answer, for `times` requests. */
	const answer = (response: unknown, times = 1) =>
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { success: true, response },
				match: { rpcMethod: 'getkurs' },
				times,
			},
		]);
	const getAll = { resource: 'rate', operation: 'get', provider: 'bca', output: 'allInOne' };

	it("reads numbers and number text in the provider's order; no average is the middle; a second row of a currency is ignored", async () => {
		answer([
			{ name: 'USD', rate_sell: '14080.00', rate_buy: '13940.00', rate_avg: '14010.00' },
			{ name: 'eur', rate_sell: 15100.5, rate_buy: 14900.5, rate_avg: 15000.5 },
			{ name: 'SGD', rate_sell: '10,500.25', rate_buy: '10.400,75' },
			{ name: 'USD', rate_sell: 2, rate_buy: 2, rate_avg: 2 },
			{ name: 'JPY', rate_buy: 0, rate_sell: 'n/a', rate_avg: 106.05 },
		]);
		const { output, error } = await runCurrencyRate(sandbox, getAll);
		expect(error).toBeUndefined();
		expect(output('Node')[0].json).toMatchObject({
			currencies: ['USD', 'EUR', 'SGD', 'JPY'],
			rates: {
				USD: { buy: 13940, sell: 14080, average: 14010 },
				EUR: { buy: 14900.5, sell: 15100.5, average: 15000.5 },
				SGD: { buy: 10400.75, sell: 10500.25, average: 10450.5 },
				JPY: { buy: null, sell: null, average: 106.05 },
			},
		});
	});

	it('a rate written as text that reads two ways ("17.597") is null, never guessed, and Convert refuses it', async () => {
		answer(
			[
				{ name: 'USD', rate_buy: '16.201,25', rate_sell: '16.298,75', rate_avg: '16.250,00' },
				{ name: 'EUR', rate_buy: '17.597', rate_sell: '17.702,95', rate_avg: '17.650' },
			],
			2,
		);
		const get = await runCurrencyRate(sandbox, getAll);
		expect(get.output('Node')[0].json.rates).toEqual({
			USD: { buy: 16201.25, sell: 16298.75, average: 16250 },
			EUR: { buy: null, sell: 17702.95, average: null },
		});
		const convert = await runCurrencyRate(sandbox, {
			resource: 'rate',
			operation: 'convert',
			provider: 'bca',
			amount: 1,
			fromCurrency: 'EUR',
			toCurrency: 'IDR',
		});
		expect(convert.error?.message).toBe(
			'Field "Rate" is "average", but provider "bca" gives no usable average rate for EUR at the moment (none, zero, or text that reads two ways) [item 0]',
		);
	});

	it('skips rows whose name is no currency code (a 200 KB name too) and keeps at most 200 currencies', async () => {
		answer([
			{ name: 'X'.repeat(200_000), rate_avg: 1 },
			{ name: 'US D', rate_avg: 1 },
			{ name: '<script>', rate_avg: 1 },
			{ name: 'JPY 100', rate_avg: 10605 },
			{ name: 'usd', rate_avg: 16250 },
			...Array.from({ length: 300 }, (_, n) => ({ name: `C${n}`, rate_avg: 1 })),
		]);
		const { output } = await runCurrencyRate(sandbox, getAll);
		const codes = output('Node')[0].json.currencies as string[];
		expect(codes[0]).toBe('USD');
		expect(codes).toHaveLength(200);
		expect(codes.every((code) => /^[A-Z0-9]{2,12}$/.test(code))).toBe(true);
	});

	it("refuses an answer that holds no list of rates, with the server's words", async () => {
		sandbox.addFaults([
			{
				kind: 'answer',
				result: { success: true, rates: 'soon' },
				match: { rpcMethod: 'getkurs' },
				times: 1,
			},
		]);
		const { error } = await runCurrencyRate(sandbox, getAll);
		expect(error?.message).toBe(
			'Get Rates (GET /api/rate/1.0/get function=getkurs) failed: the answer holds no list of rates ("response"): "{"success":true,"rates":"soon"}" [item 0]',
		);
	});

	it.each([
		['its words in `error`', { success: false, error: 'Provider offline' }, 'Provider offline'],
		['no words', { success: false }, 'success: false'],
		['blank words', { success: false, message: '', error: 'unused' }, 'success: false'],
		['words that are no text', { success: false, message: 42 }, 'success: false'],
	])('`success: false` with %s: refused, saying so', async (_case, result, words) => {
		sandbox.addFaults([{ kind: 'answer', result, match: { rpcMethod: 'getkurs' }, times: 1 }]);
		const { error } = await runCurrencyRate(sandbox, getAll);
		expect(error?.message).toBe(
			`Get Rates (GET /api/rate/1.0/get function=getkurs) failed: the server refused the request: "${words}" [item 0]`,
		);
	});
});
