/**
 * The Messaging Account Trigger under `n8n start`, with examples/whatsapp-needs-a-scan.json
 * ("Tell me when WhatsApp needs a scan", QR Code Needed + Connected Again → Send Email) polling
 * every minute (only Poll Times changed) and an SMTP sink as its mail server:
 *
 * 1. activation polls once, starts nothing, and n8n saves the trigger's memory;
 * 2. the sandbox logs the account out (no QR code yet): the next tick changes a watched state
 *    without an event, so it starts an execution without items (the save) and n8n's database
 *    holds "disconnected";
 * 3. the gateway shows a QR code while the workflow is deactivated; activating it again (n8n
 *    builds it anew from its database, as after a restart) fires at once: one execution whose
 *    trigger item carries the PNG, and Send Email mails it; the attachment scans to the sandbox's
 *    code. The next tick (same code) starts nothing;
 * 4. the phone scans: the next tick mails "WhatsApp is connected again".
 */
import { readFileSync } from 'fs';
import { join } from 'path';

import { pngShowsQrOf } from '../../harness/qrReader';
import {
	NODE_TYPES,
	getExecution,
	importCredential,
	listExecutions,
	nodesOf,
	waitForExecution,
	type ExecutionSummary,
	type ScenarioContext,
	type WorkflowJson,
} from '../lib';
import { startSmtpSink } from '../lib/smtpSink';

const EXAMPLE = 'examples/whatsapp-needs-a-scan.json';
const TRIGGER_TYPE = NODE_TYPES.messagingAccountTrigger;
const SMTP_CREDENTIAL = { id: 'smtp-credential', name: 'SMTP' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function messagingAccountTriggerMailsTheQr(t: ScenarioContext): Promise<void> {
	const { report, server: srv, sandbox: sb } = t;
	const example = JSON.parse(
		readFileSync(join(__dirname, '..', '..', '..', EXAMPLE), 'utf8'),
	) as WorkflowJson;
	const trigger = nodesOf(example).find((n) => n.type === TRIGGER_TYPE);
	const mailer = nodesOf(example).find((n) => n.type === 'n8n-nodes-base.emailSend');
	if (!report.check(`${EXAMPLE}: Messaging Account Trigger → Send Email`, !!trigger && !!mailer))
		return;

	const smtp = await startSmtpSink();
	const clientId = t.account.clientId;
	const id = example.id;
	try {
		await importCredential(t.userFolder, {
			...SMTP_CREDENTIAL,
			type: 'smtp',
			data: {
				host: '127.0.0.1',
				port: smtp.port,
				secure: false,
				disableStartTls: true,
				user: '',
				password: '',
			},
		});
		// Imported again now that its SMTP credential exists, polling every minute.
		const everyMinute = {
			...example,
			nodes: example.nodes.map((node) =>
				(node as { type: string }).type === TRIGGER_TYPE
					? {
							...node,
							parameters: {
								...(node as { parameters: object }).parameters,
								pollTimes: { item: [{ mode: 'everyMinute' }] },
							},
						}
					: node,
			),
		};
		await t.importWorkflow(everyMinute as WorkflowJson);

		const statusPolls = () =>
			sb.requests().filter((r) => r.path === '/api/wa/2.0/get' && r.params?.method === 'status')
				.length;
		const executionsSince = async (since: Date) =>
			(await listExecutions(srv, { workflowId: id })).filter((e) => new Date(e.startedAt) >= since);
		const waitForPoll = async (after: number, timeoutMs: number) => {
			const deadline = Date.now() + timeoutMs;
			while (statusPolls() === after && Date.now() < deadline) await sleep(250);
			await sleep(2000);
			return statusPolls() > after;
		};

		// 1. Activation: one poll, nothing started, the memory saved.
		const activatedAt = new Date(Date.now() - 1000);
		let polls = statusPolls();
		await report.timed('activate whatsapp-needs-a-scan (every minute)', () =>
			srv.activateWorkflow(id),
		);
		report.check(
			'activation ran the first poll (Session → Get Status)',
			await waitForPoll(polls, 20_000),
		);
		report.check(
			'the first poll started no execution',
			(await executionsSince(activatedAt)).length === 0,
		);
		const memory = async () => await savedMemory(t, id, trigger!.name);
		report.check(
			'n8n saved the memory after activation: connected',
			(await memory())?.session?.connected === true,
			await memory(),
		);

		// 2. Logged out, no QR code yet: a watched change without an event, saved by an empty execution.
		sb.logout(clientId);
		const loggedOutAt = new Date();
		const save = await report.timed('the tick after the logout', () =>
			waitForExecution(srv, { workflowId: id }, { after: loggedOutAt, timeoutMs: 100_000 }),
		);
		const saveRun = await getExecution(srv, save.id);
		const saveData = saveRun.data?.resultData.runData ?? {};
		report.check(
			'it started one execution without items: the trigger output nothing, Send Email did not run',
			save.status === 'success' &&
				(saveData[trigger!.name]?.[0]?.data?.main?.[0] ?? []).length === 0 &&
				saveData[mailer!.name] === undefined &&
				smtp.mails.length === 0,
			{ status: save.status, nodes: Object.keys(saveData), mails: smtp.mails.length },
		);
		const saved = await memory();
		report.check(
			"n8n's database now holds the disconnection",
			saved?.session?.connected === false,
			saved,
		);

		// 3. While the workflow is off, the gateway shows a QR code; activating it again (a fresh
		// Workflow from the database, as after a restart) fires on its first poll.
		await srv.deactivateWorkflow(id);
		const payload = sb.newQr(clientId);
		const reactivatedAt = new Date();
		polls = statusPolls();
		await srv.activateWorkflow(id);
		const qrRun = await report.timed('the execution of the first poll after reactivation', () =>
			waitForExecution(srv, { workflowId: id }, { after: reactivatedAt, timeoutMs: 30_000 }),
		);
		await checkQrExecution(t, qrRun, trigger!.name, mailer!.name, payload, smtp.mails);
		const qrItem = (await getExecution(srv, qrRun.id)).data?.resultData.runData[trigger!.name]?.[0]
			?.data?.main?.[0]?.[0]?.json;
		report.check(
			'the reactivated workflow went on from the saved memory: the QR item says disconnected since the save',
			qrItem?.disconnectedSince === saved?.session?.since,
			{ item: qrItem?.disconnectedSince, saved: saved?.session?.since },
		);
		report.check(
			'the next tick (the same QR code) polled and started nothing',
			(await waitForPoll(statusPolls(), 75_000)) &&
				(await executionsSince(reactivatedAt)).length === 1 &&
				smtp.mails.length === 1,
			{
				executions: (await executionsSince(reactivatedAt)).map((e) => e.id),
				mails: smtp.mails.length,
			},
		);

		// 4. Scanned: "connected again", mailed.
		sb.scan(clientId);
		const scannedAt = new Date();
		const back = await report.timed('the tick after the scan', () =>
			waitForExecution(srv, { workflowId: id }, { after: scannedAt, timeoutMs: 100_000 }),
		);
		const backItem =
			(await getExecution(srv, back.id)).data?.resultData.runData[trigger!.name]?.[0]?.data
				?.main?.[0]?.[0]?.json ?? {};
		report.check(
			'Connected Again: one item from "got qr code" to "authenticated", and a mail saying so',
			back.status === 'success' &&
				backItem.event === 'connected' &&
				backItem.previousStatus === 'got qr code' &&
				backItem.status === 'authenticated' &&
				smtp.mails.length === 2 &&
				smtp.mails[1].subject === 'WhatsApp is connected again' &&
				smtp.mails[1].attachments.length === 0,
			{ item: backItem, subjects: smtp.mails.map((m) => m.subject) },
		);
	} finally {
		await srv.deactivateWorkflow(id).catch(() => undefined);
		sb.scan(clientId);
		await smtp.close();
	}
}

async function checkQrExecution(
	t: ScenarioContext,
	run: ExecutionSummary,
	triggerName: string,
	mailerName: string,
	payload: string,
	mails: Awaited<ReturnType<typeof startSmtpSink>>['mails'],
): Promise<void> {
	const full = await getExecution(t.server, run.id);
	const item = full.data?.resultData.runData[triggerName]?.[0]?.data?.main?.[0]?.[0];
	const qrBinary = item?.binary?.qrCode as { mimeType?: string; fileName?: string } | undefined;
	t.report.check(
		'QR Code Needed: one successful execution, the item with the QR code as a PNG in its binary field',
		run.status === 'success' &&
			item?.json.event === 'qrCodeNeeded' &&
			item.json.qrNumber === 1 &&
			item.json.qrImageField === 'qrCode' &&
			qrBinary?.mimeType === 'image/png' &&
			qrBinary.fileName === 'qr-code.png' &&
			!JSON.stringify(item.json).includes(payload),
		{
			status: run.status,
			json: item?.json,
			binary: qrBinary && { ...qrBinary, data: undefined },
		},
	);
	const sent = full.data?.resultData.runData[mailerName]?.[0];
	const mail = mails[0];
	const image = mail?.attachments.find((a) => a.contentType === 'image/png');
	t.report.check(
		"Send Email mailed it: the subject, and a PNG attachment that scans to the gateway's QR code",
		!sent?.error &&
			mails.length === 1 &&
			mail.to.includes('phone-holder@example.com') &&
			mail.subject === 'WhatsApp needs a scan (QR code 1 of 3)' &&
			!!image &&
			pngShowsQrOf(image.content, payload),
		{
			error: (sent?.error as { message?: string } | undefined)?.message,
			mails: mails.map((m) => ({
				to: m.to,
				subject: m.subject,
				attachments: m.attachments.map((a) => [a.contentType, a.fileName, a.content.length]),
			})),
		},
	);
}

interface Memory {
	session?: { connected?: boolean; status?: string; since?: string };
}

/** The trigger's memory as n8n saved it in its database (the workflow's static data). */
async function savedMemory(
	t: ScenarioContext,
	id: string,
	nodeName: string,
): Promise<Memory | undefined> {
	const workflow = await t.server.rest<{
		staticData?: Record<string, Record<string, unknown>> | string | null;
	}>('GET', `/workflows/${id}`);
	const staticData =
		typeof workflow.staticData === 'string' ? JSON.parse(workflow.staticData) : workflow.staticData;
	return (staticData as Record<string, Record<string, unknown>> | null | undefined)?.[
		`node:${nodeName}`
	]?.accountHealth as Memory | undefined;
}
