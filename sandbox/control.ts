/**
 * The control API under `/__sandbox/`: the `Sandbox` methods over HTTP, for other processes
 * (the demo, real-n8n end-to-end tests). Never logged, never faulted.
 */
import { jsonAnswer, type Answer } from './answers';
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

export async function handleControl(
	sandbox: Sandbox,
	method: string,
	path: string,
	body: Buffer,
): Promise<Answer> {
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
