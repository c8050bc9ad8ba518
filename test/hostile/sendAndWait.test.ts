/**
 * Send and Wait answer links against everything that is not a person pressing the page's button:
 * link scanners and previewers under any name, HEAD, posts of the link, the button's value sent
 * in odd shapes (repeated, other case, JSON, text). None of them may decide; the person's press
 * afterwards still does.
 */

import { RECEIVED_NAME, sandboxCredential } from '../harness/engine';
import { PHONE_PASTED } from '../harness/messagingNode';
import { useSandbox } from '../harness/useSandbox';
import { WaitingHarness, askWorkflow, pageForm, type PageForm } from '../harness/waitingEngine';

const sandbox = useSandbox();
let harness: WaitingHarness;
beforeAll(async () => {
	harness = await WaitingHarness.start(sandboxCredential(sandbox.url));
});
afterAll(async () => await harness.close());

const approvalWorkflow = (responseType: 'approval' | 'freeText') =>
	askWorkflow({
		phone: PHONE_PASTED,
		message: 'Release the payroll of 48 people (Rp 612,000,000)?',
		responseType,
	});

const links = () =>
	[...(sandbox.ledger()[0]?.text ?? '').matchAll(/(http\S+)$/gm)].map((match) => match[1]);

const AGENTS = [
	'python-requests/2.32.3',
	'curl/8.5.0',
	'Go-http-client/2.0',
	'okhttp/4.12.0',
	'node',
	'undici',
	'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)',
	'Mozilla/5.0 (compatible; Barracuda Sentinel)',
	'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36',
	'',
];

/**
 * What is not a press of the button, made from the page's own form: [content type, body]. Every
 * form post carries a typed answer, so that only the button makes it no press (a free-text page
 * refuses an empty answer anyway).
 */
function notAPress(link: string, form: PageForm): Array<[string, string]> {
	const [name, value] = [form.button.name, form.button.value].map(encodeURIComponent);
	const answer = new URLSearchParams(
		Object.fromEntries(form.fields.map((field) => [field.name, 'yes'])),
	).toString();
	const posted = (fields: string): [string, string] => [
		'application/x-www-form-urlencoded',
		[fields, answer].filter(Boolean).join('&'),
	];
	const ofLink = new URL(link).searchParams;
	ofLink.delete('signature');
	return [
		posted(''),
		posted(ofLink.toString()),
		posted(`${name}=${value.toUpperCase()}`),
		posted(`${name}=${value}&${name}=${value}`),
		posted(`${name}=%20${value}`),
		posted(`${name}=${value}x`),
		[
			'application/json',
			JSON.stringify({
				...Object.fromEntries(new URLSearchParams(answer)),
				[form.button.name]: form.button.value,
			}),
		],
		['text/plain', [`${name}=${value}`, answer].filter(Boolean).join('&')],
	];
}

describe.each(['approval', 'freeText'] as const)('%s links', (responseType) => {
	it('no GET, HEAD or post without the button decides, from any agent; the press then does', async () => {
		const execution = await harness.run(approvalWorkflow(responseType));
		expect(execution.status).toBe('waiting');
		for (const link of links()) {
			const form = pageForm((await harness.open(link)).text);
			if (!form) throw new Error(`The page of ${link} has no form`);
			for (const agent of AGENTS) {
				const headers = { 'user-agent': agent };
				expect((await harness.open(link, { headers })).resumed).toBe(false);
				expect((await harness.open(link, { method: 'HEAD', headers })).resumed).toBe(false);
				for (const [type, body] of notAPress(link, form)) {
					const response = await fetch(link, {
						method: 'POST',
						headers: { ...headers, 'content-type': type },
						body,
					});
					const page = await response.text();
					expect(harness.calls.at(-1)?.resumed).toBe(false);
					// Never the question, whatever is posted (free text: not even the form page).
					expect(page).not.toContain('payroll');
				}
			}
		}
		expect(harness.execution(execution.id).status).toBe('waiting');
		const [first] = links();
		const fields = Object.fromEntries(
			(pageForm((await harness.open(first)).text)?.fields ?? []).map((field) => [
				field.name,
				'Yes',
			]),
		);
		expect(await harness.press(first, fields)).toMatchObject({ status: 200, resumed: true });
		const [answer] = (await harness.settled(execution.id)).output(RECEIVED_NAME);
		expect(answer.json).toMatchObject(
			responseType === 'freeText' ? { text: 'Yes', answered: true } : { approved: true },
		);
	});
});
