/**
 * The Messaging Trigger against hostile senders and echoing servers: every parser that sees a
 * stranger's request is linear-time on 1 MiB of its worst input (ratios against a linear pass in
 * the same run), the worst payload shapes are refused with 400 through n8n's engine, and the
 * trigger's secrets appear in no error, log, static data or output, in any form the redaction
 * looks for.
 */
import { request } from 'undici';

import { performance } from 'perf_hooks';

import { expectLinearTime, expectNoSecret } from '../harness/hostile';
import { cleanFileName } from '../../nodes/shared/fileName';
import { boundedCopy } from '../../nodes/MessagingTrigger/message';
import { useSandbox } from '../harness/useSandbox';
import { useTriggerHarnesses } from '../harness/messagingTriggerNode';

const sandbox = useSandbox();
const harness = useTriggerHarnesses(sandbox);

describe('linear time on the worst input a sender can construct', () => {
	const deepJson = (bytes: number) =>
		JSON.parse(`${'['.repeat(bytes / 2)}${']'.repeat(bytes / 2)}`) as unknown;
	const wideJson = (bytes: number) => JSON.parse(`[${'1,'.repeat(bytes / 2 - 1)}1]`) as unknown;

	it.each([
		['bounded copy of a deep array', { input: deepJson, run: boundedCopy }],
		['bounded copy of a wide array', { input: wideJson, run: boundedCopy }],
		[
			'file name of bidi overrides and slashes',
			{ input: (n: number) => '\u202E/'.repeat(n / 2), run: cleanFileName },
		],
		[
			'file name of device-name-like dots',
			{ input: (n: number) => `con${'.'.repeat(n - 3)}`, run: cleanFileName },
		],
	] as const)('%s', (name, testCase) => {
		const result = expectLinearTime(name, testCase as never);
		expect(result.growth).toBeLessThan(8);
	});
});

/**
 * A delivery through n8n's engine, timed (median of three) on an input of n and of 4n bytes and
 * against a plain message of 4n bytes: a linear trigger takes at most about 4 times as long on the
 * larger input and not much longer than on the plain one; a quadratic one about 16 times, and far
 * longer. Up to four measurements, as in expectLinearTime.
 */
async function linearDelivery(
	bytes: number,
	post: (body: string) => Promise<unknown>,
	hostile: (bytes: number) => string,
	plain: (bytes: number) => string,
): Promise<{ growth: number; overPlain: number }> {
	const median = async (body: string) => {
		const times: number[] = [];
		for (let run = 0; run < 4; run++) {
			const start = performance.now();
			await post(body);
			if (run > 0) times.push(performance.now() - start);
		}
		return Math.max(0.05, times.sort((a, b) => a - b)[1]);
	};
	let result = { growth: Infinity, overPlain: Infinity };
	for (let attempt = 0; attempt < 4 && (result.growth >= 8 || result.overPlain >= 3); attempt++) {
		const large = await median(hostile(bytes));
		result = {
			growth: large / (await median(hostile(bytes / 4))),
			overPlain: large / (await median(plain(bytes))),
		};
	}
	return result;
}

describe('linear time through the engine on the worst request a sender can construct', () => {
	const MiB = 1024 * 1024;
	const params = (fields: Record<string, unknown>) => JSON.stringify({ params: fields });

	it.each([
		[
			// A national number ("0…") is what the own-number check reads with the phone library, and
			// "#a" makes the extension pattern fail late. Smaller: a quadratic pattern would run for hours
			// on 1 MiB before failing.
			'sender "0" + spaces + "#a" (the phone-number regex case)',
			(n: number) => params({ sender: `0${' '.repeat(n - 3)}#a` }),
			16 * 1024,
		],
		['sender of digits and spaces', (n: number) => params({ sender: '1 '.repeat(n / 2) }), MiB],
		[
			'own-number comparison on a huge sender',
			(n: number) => params({ sender: `0${'8 '.repeat(n / 2)}` }),
			MiB,
		],
		[
			'a data URI with a broken head',
			(n: number) => params({ type: 'image', body: `data:${';'.repeat(n)},` }),
			MiB,
		],
	])('%s', async (_, body, bytes) => {
		const trigger = await harness({ verification: 'none', options: { defaultCountry: 'ID' } });
		await trigger.activate();
		const post = async (text: string) => {
			const answer = await request(trigger.productionUrl, { method: 'POST', body: text });
			expect(answer.statusCode).toBe(200);
			await answer.body.text();
			await trigger.settled();
		};
		const plain = (n: number) => params({ message: 'a'.repeat(n) });
		const { growth, overPlain } = await linearDelivery(bytes, post, body, plain);
		expect(growth).toBeLessThan(8);
		expect(overPlain).toBeLessThan(3);
	});

	it("the charset of a long Content-Type (as long as Node's header limit lets it be)", async () => {
		const trigger = await harness({ verification: 'none' });
		await trigger.activate();
		const post = async (contentType: string) => {
			const answer = await request(trigger.productionUrl, {
				method: 'POST',
				headers: { 'content-type': contentType },
				body: params({ message: 'x' }),
			});
			expect(answer.statusCode).toBe(200);
			await answer.body.text();
		};
		const hostile = (n: number) => `application/octet-stream${'; a=b'.repeat(n / 5)}`;
		const plain = (n: number) => `application/octet-stream; a=${'b'.repeat(n)}`;
		const { growth, overPlain } = await linearDelivery(12 * 1024, post, hostile, plain);
		expect(growth).toBeLessThan(8);
		expect(overPlain).toBeLessThan(3);
	});
});

describe('payloads refused through the engine', () => {
	it('a 200,000-deep array is answered 400 naming the limit, and starts nothing', async () => {
		const trigger = await harness({ verification: 'none' });
		await trigger.activate();
		const body = `{"params":{"message":"x","deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
		const answer = await request(trigger.productionUrl, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body,
		});
		expect(answer.statusCode).toBe(400);
		expect(await answer.body.json()).toEqual({
			received: false,
			error: 'The payload is nested deeper than the limit of 32 levels of arrays and objects',
		});
		await trigger.settled();
		expect(trigger.executions).toHaveLength(0);
	});

	it('"__proto__" at every level leaves the items and Object.prototype untouched', async () => {
		const trigger = await harness({ verification: 'none' });
		await trigger.activate();
		const body =
			'{"__proto__":{"polluted":1},"params":{"message":"x","__proto__":{"type":"image","polluted":1},"a":[{"__proto__":{"polluted":1}}]}}';
		const answer = await request(trigger.productionUrl, {
			method: 'POST',
			headers: { 'content-type': 'text/plain' },
			body,
		});
		expect(answer.statusCode).toBe(200);
		await answer.body.text();
		await trigger.settled();
		const [item] = trigger.executions[0].receivedItems;
		expect(item.json.type).toBe('text');
		expect(JSON.stringify(item.json)).not.toContain('polluted');
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
	});
});

/**
 * What of an error reaches the user and n8n's log: its message, description, stack and cause. (An
 * n8n node error also carries the node with its parameters, i.e. the workflow as saved, including
 * a Shared Secret typed into it: that is the workflow definition, not something the error adds.)
 */
function shown(error: unknown): unknown {
	const { message, stack, description, cause } = (error ?? {}) as Record<string, unknown>;
	return { message, stack, description, cause };
}

describe("the trigger's secrets in no error, log, static data or answer", () => {
	// Characters that change in every encoding: quotes, backslash, HTML and URL specials, non-ASCII.
	const shared = 's3"cr\\et<&>\'/+= ü-long-enough';
	const echo = 'Invalid webhook {whatsapp_webhook}';

	it('activation error: a gateway echoing the registered URL (shared secret in the query)', async () => {
		const trigger = await harness({ verification: 'querySecret', sharedSecret: shared });
		sandbox.addFaults([
			{ kind: 'rpcError', match: { rpcMethod: 'update' }, times: 1, message: echo },
		]);
		const error = await trigger.activate().then(
			() => undefined,
			(thrown: unknown) => thrown,
		);
		expect(error).toBeInstanceOf(Error);
		expect((error as Error).message).toMatch(/Invalid webhook .*\[redacted\]/);
		expectNoSecret('activation error', shown(error), [shared]);
		expectNoSecret('logs', trigger.logs, [shared]);
		expectNoSecret('static data', trigger.staticData(), [shared]);
	});

	it('deactivation warning: the generated secret of the URL being put back (after Listen for test event)', async () => {
		const trigger = await harness();
		await trigger.activate();
		const production = new URL(sandbox.accounts()[0].whatsappWebhook!).searchParams.get('token')!;
		await trigger.listenForTestEvent();
		const test = new URL(sandbox.accounts()[0].whatsappWebhook!).searchParams.get('token')!;
		sandbox.addFaults([
			{
				kind: 'rpcError',
				match: { rpcMethod: 'update' },
				times: 1,
				message: `${echo} (JSON: ${JSON.stringify('{whatsapp_webhook}')})`,
			},
		]);
		await expect(trigger.stopListeningForTestEvent()).resolves.toBe(false);
		const warning = trigger.logs.find((line) => line.level === 'warn');
		expect(warning?.message).toMatch(
			/could not restore or clear the account's webhook: .*Invalid webhook .*\[redacted\]/,
		);
		expectNoSecret('deactivation warning', trigger.logs, [production, test]);
		expectNoSecret('static data', trigger.staticData(), [production, test]);
	});

	it('activation error: the generated secret', async () => {
		const trigger = await harness();
		sandbox.addFaults([
			{ kind: 'rpcError', match: { rpcMethod: 'update' }, times: 1, message: echo },
		]);
		const error = await trigger.activate().then(
			() => undefined,
			(thrown: unknown) => thrown,
		);
		const sent = sandbox
			.requests()
			.filter((entry) => entry.params?.method === 'update')
			.at(-1)?.params?.whatsapp_webhook as string;
		const registered = /token=([\w-]{43})/.exec(sent)?.[1];
		expect(registered).toBeDefined();
		expect((error as Error).message).toMatch(/\[redacted\]/);
		expectNoSecret('activation error', shown(error), [registered!]);
		expectNoSecret('logs', trigger.logs, [registered!]);
	});

	it('refusals and items: a wrong secret is never echoed, the API key never copied', async () => {
		const trigger = await harness({ verification: 'apiKey' });
		await trigger.activate();
		const wrong = await sandbox.deliverIncoming({ apiKey: 'demo-secreT', message: 'x' });
		expectNoSecret('401 answer', wrong.body, ['demo-secret', 'demo-secreT']);
		await sandbox.deliverIncoming({ apiKey: 'demo-secret', message: 'right' });
		await trigger.settled();
		expect(trigger.executions).toHaveLength(1);
		expectNoSecret('items', trigger.executions[0].receivedItems, ['demo-secret']);
	});
});
