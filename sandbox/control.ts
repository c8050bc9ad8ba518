/**
 * The control API under `/__sandbox/`: the `Sandbox` methods over HTTP, for other processes
 * (the demo, real-n8n end-to-end tests). Never logged, never faulted.
 */
import type { IncomingHttpHeaders } from 'http';

import { isJsonContentType, jsonAnswer, type Answer } from './answers';
import { phonePage } from './phone';
import type { FaultRule, IncomingMessage, RateMove, Sandbox, UsageSettings } from './types';

export const CONTROL_PREFIX = '/__sandbox/';

type ControlHandler = (
	sandbox: Sandbox,
	body: Record<string, unknown>,
) => unknown | Promise<unknown>;

const OK = { ok: true };

const clientIdOf = (body: Record<string, unknown>) =>
	typeof body.clientId === 'string' ? body.clientId : undefined;

const CONTROL_ROUTES: Record<string, ControlHandler> = {
	'GET /__sandbox/ledger': (sandbox) => sandbox.ledger(),
	'GET /__sandbox/requests': (sandbox) => sandbox.requests(),
	'GET /__sandbox/stats': (sandbox) => sandbox.stats(),
	'GET /__sandbox/accounts': (sandbox) => sandbox.accounts(),
	'POST /__sandbox/faults': (sandbox, body) => {
		if (!Array.isArray(body.rules)) throw new Error('Body must be {"rules": FaultRule[]}');
		sandbox.addFaults(body.rules as FaultRule[]);
		return OK;
	},
	'DELETE /__sandbox/faults': (sandbox) => {
		sandbox.clearFaults();
		return OK;
	},
	'POST /__sandbox/expire-tokens': (sandbox) => {
		sandbox.expireTokens();
		return OK;
	},
	'POST /__sandbox/scan': (sandbox, body) => {
		sandbox.scan(typeof body.clientId === 'string' ? body.clientId : undefined);
		return OK;
	},
	'POST /__sandbox/logout': (sandbox, body) => {
		sandbox.logout(clientIdOf(body), { showQr: body.showQr === true });
		return OK;
	},
	'POST /__sandbox/qr': (sandbox, body) => ({
		ok: true,
		qrPayload: sandbox.newQr(clientIdOf(body)),
	}),
	'POST /__sandbox/webhook': (sandbox, body) => {
		if (body.url !== null && typeof body.url !== 'string')
			throw new Error('Body must be {"clientId"?: string, "url": string | null}');
		sandbox.setWebhook(clientIdOf(body), body.url ?? undefined);
		return OK;
	},
	'POST /__sandbox/rates': (sandbox, body) => sandbox.moveRate(body as unknown as RateMove),
	'POST /__sandbox/reset': (sandbox) => {
		sandbox.reset();
		return OK;
	},
	'POST /__sandbox/incoming': (sandbox, body) => sandbox.deliverIncoming(body as IncomingMessage),
	'GET /__sandbox/inbox': (sandbox) => sandbox.inbox(),
	'GET /__sandbox/file-requests': (sandbox) => sandbox.fileRequests(),
	'GET /__sandbox/usage': (sandbox) => sandbox.usage(),
	'POST /__sandbox/usage': (sandbox, body) => {
		sandbox.setUsage(body as UsageSettings);
		return sandbox.usage();
	},
};

/** Pages for a person with a browser (the JSON routes above are for programs). */
const PAGE_ROUTES: Record<string, (sandbox: Sandbox) => Promise<Answer>> = {
	'GET /__sandbox/phone': async (sandbox) => await phonePage(sandbox),
};

export const CONTROL_PATHS = [...Object.keys(CONTROL_ROUTES), ...Object.keys(PAGE_ROUTES)];

function parseControlBody(body: Buffer): Record<string, unknown> {
	if (body.length === 0) return {};
	const parsed: unknown = JSON.parse(body.toString('utf8'));
	if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
		throw new Error('Body must be a JSON object');
	return parsed as Record<string, unknown>;
}

/**
 * Any web page may post to the sandbox without asking first (a "simple" request: text/plain, no
 * CORS preflight). So a call that changes something must come from a program or the sandbox's
 * own page, and be JSON, which another site cannot send without a preflight the sandbox never
 * grants. A GET changes nothing, and another site cannot read its answer.
 */
function refusedCall(method: string, headers: IncomingHttpHeaders): Answer | undefined {
	if (method === 'GET') return undefined;
	const { origin } = headers;
	const ownOrigin = `http://${headers.host ?? ''}`.toLowerCase();
	const crossSite =
		headers['sec-fetch-site'] === 'cross-site'
			? 'Sec-Fetch-Site: cross-site'
			: origin !== undefined && origin.toLowerCase() !== ownOrigin
				? `Origin: ${origin.slice(0, 100)}`
				: undefined;
	if (crossSite)
		return jsonAnswer(403, {
			error: `Control calls come from the sandbox's own pages or from programs, not from another site (${crossSite})`,
		});
	const contentType = headers['content-type'];
	if (method === 'POST' && !isJsonContentType(contentType))
		return jsonAnswer(415, {
			error: `Control calls take JSON: send Content-Type: application/json (got ${contentType?.slice(0, 100) ?? 'none'})`,
		});
	return undefined;
}

export async function handleControl(
	sandbox: Sandbox,
	method: string,
	path: string,
	headers: IncomingHttpHeaders,
	body: Buffer,
): Promise<Answer> {
	const refused = refusedCall(method, headers);
	if (refused) return refused;
	const page = PAGE_ROUTES[`${method} ${path}`];
	if (page) return await page(sandbox);
	const handler = CONTROL_ROUTES[`${method} ${path}`];
	if (!handler)
		return jsonAnswer(404, {
			error: `Unknown control call: ${method} ${path}`,
			routes: CONTROL_PATHS,
		});
	try {
		return jsonAnswer(200, await handler(sandbox, parseControlBody(body)));
	} catch (error) {
		return jsonAnswer(400, { error: error instanceof Error ? error.message : String(error) });
	}
}
