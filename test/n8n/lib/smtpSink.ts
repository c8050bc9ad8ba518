/**
 * A mail server for tests: takes every message n8n's Send Email hands it (SMTP without TLS or
 * authentication, on 127.0.0.1) and keeps it, with its attachments decoded. Just the commands
 * nodemailer uses; no relaying.
 */
import { createServer, type AddressInfo, type Socket } from 'net';

export interface ReceivedMail {
	from: string;
	to: string[];
	subject: string;
	/** The raw message, as received (dot-stuffing undone). */
	raw: string;
	attachments: Array<{
		fileName?: string;
		contentType: string;
		contentId?: string;
		content: Buffer;
	}>;
}

export interface SmtpSink {
	port: number;
	mails: ReceivedMail[];
	close(): Promise<void>;
}

/** Bounds a message: the QR image is about 10 KB. */
const MAX_MESSAGE_BYTES = 5 * 1024 * 1024;

export async function startSmtpSink(): Promise<SmtpSink> {
	const mails: ReceivedMail[] = [];
	const sockets = new Set<Socket>();
	const server = createServer((socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
		let buffer = '';
		let data: string[] | undefined;
		let from = '';
		let to: string[] = [];
		const say = (line: string) => socket.write(`${line}\r\n`);
		say('220 smtp-sink ESMTP');
		socket.setEncoding('latin1');
		socket.on('data', (chunk: string) => {
			buffer += chunk;
			if (buffer.length > MAX_MESSAGE_BYTES) {
				socket.destroy();
				return;
			}
			let end: number;
			while ((end = buffer.indexOf('\r\n')) !== -1) {
				const line = buffer.slice(0, end);
				buffer = buffer.slice(end + 2);
				if (data) {
					if (line === '.') {
						const raw = data.join('\r\n');
						data = undefined;
						mails.push({ from, to, ...parseMessage(raw) });
						say('250 OK: queued');
					} else data.push(line.startsWith('..') ? line.slice(1) : line);
					continue;
				}
				const command = line.slice(0, 4).toUpperCase();
				if (command === 'EHLO') say('250-smtp-sink\r\n250 SIZE 5242880');
				else if (command === 'HELO') say('250 smtp-sink');
				else if (command === 'MAIL') {
					from = /<([^>]*)>/.exec(line)?.[1] ?? '';
					to = [];
					say('250 OK');
				} else if (command === 'RCPT') {
					to.push(/<([^>]*)>/.exec(line)?.[1] ?? '');
					say('250 OK');
				} else if (command === 'DATA') {
					data = [];
					say('354 End data with <CR><LF>.<CR><LF>');
				} else if (command === 'RSET' || command === 'NOOP') say('250 OK');
				else if (command === 'QUIT') {
					say('221 Bye');
					socket.end();
				} else say('502 Command not implemented');
			}
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		port: (server.address() as AddressInfo).port,
		mails,
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/** Headers of a message or part, unfolded, names in lower case. */
function headersOf(text: string): Map<string, string> {
	const headers = new Map<string, string>();
	for (const line of text.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
		const colon = line.indexOf(':');
		if (colon > 0)
			headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
	}
	return headers;
}

function parameter(header: string | undefined, name: string): string | undefined {
	return header ? new RegExp(`${name}="?([^";]+)"?`, 'i').exec(header)?.[1] : undefined;
}

/** The subject and the base64 parts of a (multipart) message, as nodemailer writes them. */
function parseMessage(raw: string): Omit<ReceivedMail, 'from' | 'to'> {
	const split = raw.indexOf('\r\n\r\n');
	const headers = headersOf(raw.slice(0, split));
	const attachments: ReceivedMail['attachments'] = [];
	const walk = (contentType: string | undefined, body: string) => {
		const boundary = parameter(contentType, 'boundary');
		if (!boundary) return;
		for (const part of body.split(`--${boundary}`).slice(1)) {
			if (part.startsWith('--')) break;
			const at = part.indexOf('\r\n\r\n');
			const partHeaders = headersOf(part.slice(0, at).replace(/^\r\n/, ''));
			const partType = partHeaders.get('content-type') ?? 'text/plain';
			const partBody = part.slice(at + 4);
			if (/^multipart\//i.test(partType)) walk(partType, partBody);
			else if (
				/base64/i.test(partHeaders.get('content-transfer-encoding') ?? '') &&
				!/^text\//i.test(partType)
			)
				attachments.push({
					fileName:
						parameter(partHeaders.get('content-disposition'), 'filename') ??
						parameter(partType, 'name'),
					contentType: partType.split(';')[0].trim().toLowerCase(),
					contentId: partHeaders.get('content-id')?.replace(/[<>]/g, ''),
					content: Buffer.from(partBody.replace(/\s+/g, ''), 'base64'),
				});
		}
	};
	walk(headers.get('content-type'), raw.slice(split + 4));
	return { subject: headers.get('subject') ?? '', raw, attachments };
}
