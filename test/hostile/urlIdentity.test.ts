/**
 * The identity of a file's URL, which Send File from a URL hashes into a message's idempotency key
 * (Skip Repeats Within): one pass over a bounded part of the query, whatever the URL holds. A
 * query of many signing or secret-looking parameters used to be rewritten once per parameter: a
 * 70 KB URL held n8n for seconds.
 */
import { accountJson } from '../../nodes/Messaging/helpers/accountFields';
import { urlIdentity } from '../../nodes/Messaging/helpers/download';
import { expectLinearTime } from '../harness/hostile';

/** A link of about `bytes` bytes: signing parameters, each also under a name of its own. */
function signedLink(bytes: number): string {
	const pairs: string[] = [];
	for (let i = 0, length = 0; length < bytes; i++) {
		const pair = `sig=${i}&token${i}=x&X-Amz-Signature=${i}`;
		pairs.push(pair);
		length += pair.length + 1;
	}
	return `https://files.example.com/reports/q3.pdf?${pairs.join('&')}`;
}

describe('the identity of a file URL (Skip Repeats Within)', () => {
	it('is linear-time in the URL: the query is read once, not rewritten per signing parameter', () => {
		// Small enough for a quadratic rewrite to fail in seconds rather than hang.
		expectLinearTime('urlIdentity on 32 KB', {
			input: signedLink,
			run: urlIdentity,
			bytes: 32 * 1024,
		});
		expectLinearTime('urlIdentity on 1 MB', { input: signedLink, run: urlIdentity });
	});

	it('reads a bounded part of a long query: parameters past it are kept as they are', () => {
		const link = signedLink(64 * 1024);
		const identity = urlIdentity(link);
		expect(identity.startsWith('https://files.example.com/reports/q3.pdf?sig=&token0=x')).toBe(
			true,
		);
		expect(identity.endsWith(link.slice(-200))).toBe(true);
	});
});

describe("Account → Check's answer, its webhook URLs shown without query values", () => {
	/** An answer of about `bytes` bytes: 4 KB webhook URLs of many one-letter keys each. */
	function answerOf(bytes: number): unknown {
		const url =
			`https://n8n.example.com/webhook/abc?${Array.from({ length: 1000 }, (_, i) => `k${i}=1`).join('&')}`.slice(
				0,
				4000,
			);
		const urls = Array.from({ length: Math.ceil(bytes / url.length) }, () => url);
		return { message: { whatsapp_number: '6281288776713', whatsapp_webhook: url, urls } };
	}

	it('is linear-time: each URL is rewritten once, not once per query key', () => {
		expectLinearTime('accountJson on 512 KB', {
			input: answerOf,
			run: accountJson,
			bytes: 512 * 1024,
		});
	});
});
