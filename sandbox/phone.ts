/**
 * `GET /__sandbox/phone`: the sandbox's stand-in for the phone that scans the login QR code.
 * It lists the accounts; an account that is not connected shows the QR code the gateway is
 * showing (once n8n asked for it with Get QR Code or Login) and a "Scan" button, which does what
 * `POST /__sandbox/scan` does. A connected account has a "Log out" button (`POST /__sandbox/logout`).
 */
import QRCode from 'qrcode';

import type { Answer } from './answers';
import type { SandboxAccount } from './types';

const escapeHtml = (text: string) =>
	text.replace(
		/[&<>"']/g,
		(c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
	);

async function accountCard(account: SandboxAccount): Promise<string> {
	const id = escapeHtml(account.clientId);
	const status = escapeHtml(account.status ?? 'init');
	if (account.status === 'authenticated') {
		return `<section><h2>${id}</h2><p>Status: <b>${status}</b> (connected: messages can be sent)</p>
<button data-call="logout" data-client="${id}">Log out</button></section>`;
	}
	const qr = account.qrPayload
		? `<p>The QR code the gateway shows now:</p><img alt="QR code of ${id}" src="${await QRCode.toDataURL(account.qrPayload)}">`
		: '<p>No QR code yet: run <b>Session → Get QR Code</b> (or Login) in n8n with this account, then reload.</p>';
	return `<section><h2>${id}</h2><p>Status: <b>${status}</b> (not connected)</p>${qr}
<button data-call="scan" data-client="${id}">Scan with the phone</button></section>`;
}

export async function phonePage(accounts: SandboxAccount[]): Promise<Answer> {
	const cards = await Promise.all(accounts.map(accountCard));
	const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandbox phone</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}section{border:1px solid #ccc;padding:1em;margin:1em 0}img{width:220px}</style>
</head><body><h1>Sandbox phone</h1>
<p>Scanning a QR code here completes the login of a sandbox account, as WhatsApp on a phone would (Linked devices → Link a device).</p>
${cards.join('\n')}
<script>
for (const button of document.querySelectorAll('button[data-call]')) {
	button.addEventListener('click', async () => {
		await fetch('/__sandbox/' + button.dataset.call, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ clientId: button.dataset.client }) });
		location.reload();
	});
}
</script></body></html>`;
	return { status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8' }, body };
}
