/**
 * test/n8n/workflows/send-file-base64.json through `n8n execute`: the node's output and the file
 * the sandbox received, byte for byte.
 */
import { createHash } from 'crypto';
import { executeWithGenericChecks, nodeOutput, nodesOf, type ScenarioContext } from '../lib';

/** Decodes the fileContent of a base64 Send File node (data URI or bare base64). */
function decodeFileContent(content: string): Buffer {
	const m = /^data:[^;,]*(?:;[^,]*)?,(.*)$/s.exec(content);
	return Buffer.from((m ? m[1] : content).replace(/\s+/g, ''), 'base64');
}

export async function sendFileBase64ArrivesByteForByte(t: ScenarioContext): Promise<void> {
	const { wf } = t.workflow('E2eSendFile64');
	const run = await executeWithGenericChecks(t, wf.id);
	if (!t.report.check('test/n8n/workflows/send-file-base64.json was run', !!run)) return;
	const params = nodesOf(wf).find((n) => n.name === 'Send Invoice')?.parameters ?? {};
	const bytes = decodeFileContent(String(params.fileContent));
	const sha256 = createHash('sha256').update(bytes).digest('hex');
	const out = nodeOutput(run, 'Send Invoice');
	t.report.check(
		'Send Invoice output: sent:true, normalised phone, fileName/mimeType/fileSize',
		out.length === 1 &&
			out[0].sent === true &&
			out[0].phone === t.account.number &&
			out[0].fileName === 'invoice-2026-0042.txt' &&
			out[0].mimeType === 'text/plain' &&
			out[0].fileSize === bytes.length,
		out[0],
	);
	const entry = t.sandbox.ledger().find((e) => e.kind === 'file' && e.id === out[0]?.id);
	t.report.check(
		'sandbox ledger: the file arrived byte for byte (sha256, size, filename, mime type, caption)',
		!!entry &&
			entry.phone === t.account.number &&
			entry.file?.sha256 === sha256 &&
			entry.file?.size === bytes.length &&
			entry.file?.filename === 'invoice-2026-0042.txt' &&
			entry.file?.mimeType === 'text/plain' &&
			entry.caption === 'Your invoice 2026-0042',
		{ ledger: entry, expected: { sha256, size: bytes.length } },
	);
}
