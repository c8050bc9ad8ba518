/**
 * Send and Wait answer links as people and machines open them: a GET shows a page (what a link
 * preview or a scanner does); a person presses the page's button, which a browser submits as a
 * form post to the same signed address with the button's name and value.
 */

export const BROWSER =
	'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36';

/** User agents of the link scanners and previewers that used to answer for the person. */
export const SCANNERS = [
	'python-requests/2.32.3',
	'curl/8.5.0',
	'Go-http-client/1.1',
	'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)',
];

export interface Opened {
	status: number;
	page: string;
}

/** A GET on a link with a user agent. */
export async function openLink(url: string, userAgent = BROWSER): Promise<Opened> {
	const response = await fetch(url, { headers: { 'user-agent': userAgent }, redirect: 'manual' });
	return { status: response.status, page: await response.text() };
}

/**
 * Opens the link and presses its page's button: posts `fields` (e.g. a typed answer) with the
 * button's name and value. Where the page has no button (`pressed: false`), `fields` are posted
 * alone, as a stale page's button would post them.
 */
export async function pressAnswerButton(
	url: string,
	fields: Record<string, string> = {},
): Promise<Opened & { pressed: boolean }> {
	const opened = await openLink(url);
	const button = /<button type="submit" name="([^"]*)" value="([^"]*)">/.exec(opened.page);
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'user-agent': BROWSER, 'content-type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams(button ? { ...fields, [button[1]]: button[2] } : fields).toString(),
		redirect: 'manual',
	});
	return { status: response.status, page: await response.text(), pressed: button !== null };
}
