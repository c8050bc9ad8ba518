/**
 * The Messaging Trigger under `n8n start`: activation registers n8n's production URL on the gateway
 * account, a post without the secret is refused, an incoming message starts one execution with the
 * right item, deactivation puts the account's previous webhook back and n8n stops answering the URL.
 */
import {
	NODE_TYPES,
	getExecution,
	listExecutions,
	nodesOf,
	waitForExecution,
	type ScenarioContext,
} from '../lib';

export async function messagingTriggerUnderStart(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const entry = t.workflows.find(
		(w) =>
			w.file.startsWith('test/n8n/workflows/') &&
			nodesOf(w.wf).some((n) => n.type === NODE_TYPES.messagingTrigger),
	);
	if (!report.check('test/n8n/workflows/ holds a Messaging Trigger workflow', !!entry)) return;
	const wf = entry!.wf;
	const trig = nodesOf(wf).find((n) => n.type === NODE_TYPES.messagingTrigger)!;
	const secret = String(trig.parameters?.sharedSecret);
	const queryName = String(trig.parameters?.queryParameterName ?? 'token');
	const prodUrl = srv.webhookUrl(`${trig.webhookId}/webhook`);
	const registered = `${prodUrl}?${queryName}=${secret}`;
	const account = () => sb.accounts().find((a) => a.clientId === t.account.clientId)!;
	report.check(
		'before activation the account has its previous webhook',
		account().whatsappWebhook === t.account.previousWebhook,
		account(),
	);

	const updatesBefore = sb.requests().filter((r) => r.params?.method === 'update').length;
	const act = await report.timed('activate Messaging Trigger workflow', () =>
		srv.activateWorkflow(wf.id),
	);
	report.check(
		'activate: publication "published"',
		act.publication?.status === 'published' ||
			(act.publication === undefined && act.active === true),
		act.publication,
	);
	report.check(
		"activation registered n8n's production URL (with the query secret) on the account",
		account().whatsappWebhook === registered && account().whatsappNumber === t.account.number,
		{
			account: account(),
			expected: registered,
		},
	);
	const updates = sb.requests().filter((r) => r.params?.method === 'update');
	report.check(
		'activation called Update Account once',
		updates.length - updatesBefore === 1,
		updates.map((u) => u.params),
	);

	// A request without the secret is refused and starts nothing.
	const noSecret = await fetch(prodUrl, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { message: 'x', sender: '6281300000002' } }),
	});
	report.check('a post without the query secret is answered 401', noSecret.status === 401, {
		status: noSecret.status,
		body: await noSecret.text(),
	});

	const t0 = new Date(Date.now() - 1000);
	const delivered = await report.timed('sandbox deliverIncoming → n8n', () =>
		sb.deliverIncoming({
			type: 'text',
			message: 'Halo, what is the USD rate today?',
			sender: '6281300000002@c.us',
			senderName: 'Budi',
		}),
	);
	let body: Record<string, unknown> = {};
	try {
		body = JSON.parse(delivered.body) as Record<string, unknown>;
	} catch {
		/* asserted below */
	}
	report.check(
		"the gateway's post went to the registered URL and was answered 200",
		delivered.url === registered && delivered.status === 200,
		{ url: delivered.url, status: delivered.status },
	);
	report.check(
		'the answer body is the trigger\'s {"received": true, "messageId": ...} (README "What the gateway is answered")',
		body.received === true && 'messageId' in body,
		{
			body: delivered.body,
		},
	);

	const exec = await report.timed('execution visible in REST', () =>
		waitForExecution(srv, { workflowId: wf.id }, { after: t0, timeoutMs: 30_000 }),
	);
	report.check(
		'GET /rest/executions: one successful webhook execution',
		exec.status === 'success' && exec.mode === 'webhook',
		{ id: exec.id, status: exec.status, mode: exec.mode },
	);
	const all = await listExecutions(srv, { workflowId: wf.id });
	report.check(
		'exactly one execution (the 401 post started nothing)',
		all.length === 1,
		all.map((e) => `${e.id}:${e.status}`),
	);
	const full = await getExecution(srv, exec.id);
	const item = full.data?.resultData.runData[trig.name]?.[0]?.data?.main?.[0]?.[0]?.json ?? {};
	report.check(
		'trigger item: sender (digits only), senderName, recipient, type text, the text, receivedAt',
		item.sender === '6281300000002' &&
			item.senderName === 'Budi' &&
			item.type === 'text' &&
			item.text === 'Halo, what is the USD rate today?' &&
			typeof item.receivedAt === 'string',
		item,
	);
	const payload = (item.payload ?? {}) as Record<string, unknown>;
	report.check(
		'trigger item: payload kept, without x-api-key',
		typeof payload === 'object' && !('x-api-key' in payload) && Object.keys(payload).length > 0,
		payload,
	);
	const sum = full.data?.resultData.runData.Summarise?.[0]?.data?.main?.[0]?.[0]?.json ?? {};
	report.check(
		'the next node saw the message',
		sum.summary === '6281300000002 says: Halo, what is the USD rate today?',
		sum,
	);

	// A gateway that writes latin1 and says so: the trigger reads it in that charset.
	const t1 = new Date();
	const latin1 = await sb.deliverIncoming({
		type: 'text',
		message: 'Olá, São Paulo',
		sender: '6281300000002',
		senderName: 'José',
		charset: 'latin1',
	});
	const latin1Exec = await waitForExecution(
		srv,
		{ workflowId: wf.id },
		{
			after: t1,
			timeoutMs: 30_000,
			predicate: (e) => e.id !== exec.id && (e.status === 'success' || e.status === 'error'),
		},
	);
	const latin1Item =
		(await getExecution(srv, latin1Exec.id)).data?.resultData.runData[trig.name]?.[0]?.data
			?.main?.[0]?.[0]?.json ?? {};
	report.check(
		'a latin1 body (charset=latin1) reaches the trigger as written: José, Olá, São Paulo',
		latin1.status === 200 &&
			latin1Item.senderName === 'José' &&
			latin1Item.text === 'Olá, São Paulo',
		{
			status: latin1.status,
			execution: latin1Exec.status,
			senderName: latin1Item.senderName,
			text: latin1Item.text,
		},
	);

	const deact = await report.timed('deactivate Messaging Trigger workflow', () =>
		srv.deactivateWorkflow(wf.id),
	);
	report.check(
		'deactivate: workflow inactive, publication "not_published"',
		deact.active === false && (deact.publication?.status ?? 'not_published') === 'not_published',
		{
			active: deact.active,
			publication: deact.publication?.status,
		},
	);
	report.check(
		'deactivation put back the webhook the account had before activation (README: restored when Check Account showed it)',
		account().whatsappWebhook === t.account.previousWebhook,
		account(),
	);
	const after = await fetch(registered, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ params: { message: 'late', sender: '6281300000002' } }),
	});
	report.check('after deactivation n8n answers the old URL with 404', after.status === 404, {
		status: after.status,
	});
}
