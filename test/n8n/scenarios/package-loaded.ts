/** `n8n start` loaded the package: its node types are served, every imported workflow is listed. */
import { NODE_TYPES, type ScenarioContext } from '../lib';

export async function packageLoadsUnderStart(t: ScenarioContext): Promise<void> {
	const srv = t.server;
	const typesRes = await fetch(`${srv.url}/types/nodes.json`, {
		headers: { cookie: `n8n-auth=${srv.authCookie}` },
	});
	const types = (await typesRes.json()) as Array<{ name: string }>;
	const missing = Object.values(NODE_TYPES).filter((type) => !types.some((x) => x.name === type));
	t.report.check(
		'node types served by n8n include every node of the package (NODE_TYPES)',
		missing.length === 0,
		{ missing, total: types.length },
	);
	const wfs = await srv.rest<Array<{ id: string }>>('GET', '/workflows');
	t.report.check(
		'GET /rest/workflows lists every imported workflow',
		t.workflows.every(({ wf }) => wfs.some((w) => w.id === wf.id)),
		wfs.map((w) => w.id),
	);
}
