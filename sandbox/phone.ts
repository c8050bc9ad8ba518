/**
 * `GET /__sandbox/phone`: the person on the other end of the chat. For each account: its login
 * (the QR code to scan, Log out), its usage limit, the chat as a phone shows it (what the account
 * sent: texts, files, Send and Wait questions with their answer links as buttons, each with Reply
 * as its recipient; what people wrote to it, each with Deliver again) and a box to write to the account as any number, which the
 * sandbox delivers to the account's webhook as the gateway would (what a Messaging Trigger
 * receives). Plain HTML; the buttons call the control API.
 */
import QRCode from 'qrcode';

import type { Answer } from './answers';
import type { InboxEntry, LedgerEntry, Sandbox, SandboxAccount } from './types';
import { DEFAULT_SENDER } from './webhook';

const escapeHtml = (text: string) =>
	text.replace(
		/[&<>"']/g,
		(c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
	);

/**
 * A Send and Wait answer line, `Label: <link>`, with the link as n8n signs it for the node: its
 * resume address, then `approved` (approval), `item`, `w` and n8n's `signature`, in that order.
 */
const ANSWER_LINE =
	/^([^:\n]{1,80}): (https?:\/\/[^\s?#]{1,2000}\?(?:approved=(?:true|false)&)?item=\d{1,6}&w=[0-9a-f]{1,64}&signature=[0-9a-f]{64})$/;

/** Text with its links; `answers`: Send and Wait's answer lines become buttons (never in what people wrote). */
function textHtml(text: string, answers: boolean): string {
	return text
		.split('\n')
		.map((line) => {
			const answer = answers ? ANSWER_LINE.exec(line) : null;
			if (answer)
				return `<a class="answer" href="${escapeHtml(answer[2])}" target="_blank">${escapeHtml(answer[1])}</a>`;
			return escapeHtml(line).replace(
				/https?:\/\/[^\s&<>"']+/g,
				(url) => `<a href="${url}" target="_blank">${url}</a>`,
			);
		})
		.join('<br>');
}

type ChatLine = { at: string; html: string };

const CHAT_LINES = 30;

/** What the person can do when no workflow listens (n8n's test listening takes one message). */
const LISTEN_AGAIN = 'publish the workflow, or press Listen for test event again';
export const NO_WEBHOOK = `the account has no webhook: ${LISTEN_AGAIN} (a test listens for one message)`;
export const listeningStopped = (status: number) =>
	`listening stopped (the webhook answered ${status}): ${LISTEN_AGAIN}`;

function sentLine(entry: LedgerEntry): ChatLine {
	const body =
		entry.kind === 'file' && entry.file
			? `📎 <b>${escapeHtml(entry.file.filename)}</b> (${escapeHtml(entry.file.mimeType)}, ${entry.file.size} bytes)${entry.caption ? `<br>${textHtml(entry.caption, false)}` : ''}`
			: textHtml(entry.text ?? '', true);
	return {
		at: entry.at,
		html: `<div class="msg sent" data-to="${escapeHtml(entry.phone)}"><small>to +${escapeHtml(entry.phone)} · ${escapeHtml(entry.at)}</small><br>${body}<br><button data-reply-as="${escapeHtml(entry.phone)}" data-client="${escapeHtml(entry.clientId)}">Reply as +${escapeHtml(entry.phone)}</button></div>`,
	};
}

function receivedLine(entry: InboxEntry): ChatLine {
	const number = entry.sender.replace(/@.*$/, '');
	// Typed in the form as +62 812…, or as the gateway writes numbers (62812…).
	const from = /^\d/.test(number) ? `+${number}` : number;
	const notes = [
		entry.ignored &&
			`<em class="ignored">ignored by the workflow: ${escapeHtml(entry.ignored)}</em>`,
		entry.problem && `<em class="problem">reached no workflow: ${escapeHtml(entry.problem)}</em>`,
		entry.uuid &&
			`<button data-redeliver data-client="${escapeHtml(entry.clientId)}" data-sender="${escapeHtml(entry.sender)}" data-message="${escapeHtml(entry.text)}" data-uuid="${escapeHtml(entry.uuid)}">Deliver again</button>`,
	];
	return {
		at: entry.at,
		html: `<div class="msg received"><small>from ${escapeHtml(from)} · ${escapeHtml(entry.at)}</small><br>${textHtml(entry.text, false)}${notes.map((note) => (note ? `<br>${note}` : '')).join('')}</div>`,
	};
}

async function loginHtml(account: SandboxAccount, id: string): Promise<string> {
	if (account.status === 'authenticated')
		return `<p>Status: <b>authenticated</b> (connected: messages can be sent)</p>
<button data-call="logout" data-client="${id}">Log out</button>
<button data-call="logout" data-client="${id}" data-show-qr="true">Log out and show a QR code</button>`;
	const qr = account.qrPayload
		? `<p>The QR code the gateway shows now:</p><img alt="QR code of ${id}" src="${await QRCode.toDataURL(account.qrPayload)}">`
		: `<p>No QR code yet: run <b>Session → Get QR Code</b> (or Login) in n8n with this account, or</p>
<button data-call="qr" data-client="${id}">Show a QR code</button>`;
	return `<p>Status: <b>${escapeHtml(account.status ?? 'init')}</b> (not connected)</p>${qr}
<button data-call="scan" data-client="${id}">Scan with the phone</button>`;
}

async function accountCard(sandbox: Sandbox, account: SandboxAccount): Promise<string> {
	const id = escapeHtml(account.clientId);
	const usage = sandbox.usage(account.clientId);
	const lines = [
		...sandbox
			.ledger()
			.filter((entry) => entry.clientId === account.clientId)
			.map(sentLine),
		...sandbox
			.inbox()
			.filter((entry) => entry.clientId === account.clientId)
			.map(receivedLine),
	].sort((a, b) => a.at.localeCompare(b.at));
	// A phone shows the end of a chat: the newest messages, the earlier ones counted.
	const earlier = Math.max(0, lines.length - CHAT_LINES);
	const shown = lines.slice(earlier);
	const listening = account.whatsappWebhook
		? `its webhook is <code>${escapeHtml(account.whatsappWebhook.replace(/\?.*$/, '?…'))}</code>`
		: 'no webhook yet: publish (n8n 2.x) or activate (1.x) a workflow with a Messaging Trigger, or press its Listen for test event, and messages you write here reach it';
	return `<section data-account="${id}"><h2>${id}${account.whatsappNumber ? ` · +${escapeHtml(account.whatsappNumber)}` : ''}</h2>
${await loginHtml(account, id)}
<p>Usage limit: ${usage.used} of ${usage.limit} messages used, ${usage.remaining} left.</p>
<h3>Chat</h3>
<div class="chat">${earlier ? `<p><i>${earlier} earlier messages not shown (GET /__sandbox/ledger has them all)</i></p>` : ''}${shown.map((line) => line.html).join('\n') || '<p><i>No messages yet.</i></p>'}</div>
<form class="write" data-client="${id}">
<p>Write to this account as a person (${listening}):</p>
<label>From <input name="sender" value="${DEFAULT_SENDER}" size="16"></label>
<label>Message <input name="message" size="40" required></label>
<button type="submit">Send</button> <span class="result"></span>
</form></section>`;
}

export async function phonePage(sandbox: Sandbox): Promise<Answer> {
	const cards = await Promise.all(sandbox.accounts().map((a) => accountCard(sandbox, a)));
	const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandbox phone</title>
<style>body{font-family:sans-serif;max-width:46em;margin:2em auto}section{border:1px solid #ccc;padding:1em;margin:1em 0}img{width:220px}
.chat{background:#efeae2;padding:.5em;display:flex;flex-direction:column;gap:.4em}.msg{max-width:80%;padding:.4em .6em;border-radius:.5em}
.sent{background:#fff;align-self:flex-start}.received{background:#d9fdd3;align-self:flex-end}small{color:#667}
a.answer{display:inline-block;margin:.3em .3em 0 0;padding:.3em .8em;border:1px solid #0a7;border-radius:1em;text-decoration:none;color:#075}.problem{color:#a00}.ignored{color:#667}</style>
</head><body><h1>Sandbox phone</h1>
<p>The phone of every sandbox account: scan its QR code (WhatsApp → Linked devices), read what it sent, tap a Send and Wait answer or reply as the person asked, write to it as any number, and deliver a message again as a gateway's retry does. <a href="">Reload</a></p>
${cards.join('\n')}
<script>
const post = (call, body) => fetch('/__sandbox/' + call, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
for (const button of document.querySelectorAll('button[data-call]')) {
	button.addEventListener('click', async () => {
		await post(button.dataset.call, { clientId: button.dataset.client, showQr: button.dataset.showQr === 'true' });
		location.reload();
	});
}
for (const form of document.querySelectorAll('form.write')) {
	form.addEventListener('submit', async (event) => {
		event.preventDefault();
		const data = new FormData(form);
		const answer = await post('incoming', { clientId: form.dataset.client, sender: data.get('sender'), message: data.get('message') });
		const result = await answer.json();
		const delivered = answer.ok && result.status < 300;
		form.querySelector('.result').textContent = delivered ? 'delivered (the webhook answered ' + result.status + ')' : 'not delivered: the chat says why';
		setTimeout(() => location.reload(), 600);
	});
}
// A reply comes from the number the message went to: the box below is filled in with it.
for (const button of document.querySelectorAll('button[data-reply-as]')) {
	button.addEventListener('click', () => {
		const form = document.querySelector('form.write[data-client="' + button.dataset.client + '"]');
		form.elements.sender.value = '+' + button.dataset.replyAs;
		form.elements.message.focus();
	});
}
for (const button of document.querySelectorAll('button[data-redeliver]')) {
	button.addEventListener('click', async () => {
		const { client, sender, message, uuid } = button.dataset;
		await post('incoming', { clientId: client, sender, message, uuid });
		location.reload();
	});
}
</script></body></html>`;
	return { status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8' }, body };
}
