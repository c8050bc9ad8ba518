/**
 * A chat model for real-n8n scenarios: a local server speaking the OpenAI chat-completions
 * protocol (what n8n's OpenAI Chat Model node sends, with its credential's Base URL pointed here)
 * whose answers come from a script instead of a language model. n8n has no stand-in chat model,
 * and this machine reaches no model service, so an AI Agent can only run end to end against one.
 *
 * The script sees each request's messages and tools and answers with either tool calls or a final
 * text, so a scenario can play "the model decides to call tool X with these arguments" and check
 * what n8n did with it: which tools it offered, what the tools returned, what came back.
 * Answers as JSON, or as server-sent events when the request asks for a stream.
 */
import http from 'http';
import type { AddressInfo } from 'net';

export interface ChatMessage {
	role: string;
	content?: string | null | Array<{ type: string; text?: string }>;
	tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
	tool_call_id?: string;
	name?: string;
}

interface ChatTool {
	type: string;
	function: {
		name: string;
		description?: string;
		parameters?: { properties?: Record<string, unknown>; required?: string[] };
	};
}

export interface ChatRequest {
	model?: string;
	messages: ChatMessage[];
	tools?: ChatTool[];
	stream?: boolean;
}

/** What the script answers: tool calls (name + arguments) or a final text. */
export type ScriptedAnswer =
	{ toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> } | { text: string };

export interface ScriptedModel {
	/** Base URL for the OpenAI credential's "Base URL" field (ends in /v1). */
	url: string;
	/** Every chat-completions request, in order. */
	requests: ChatRequest[];
	close(): Promise<void>;
}

/** The text of a message's content, whatever its form (string or parts). */
export function contentText(message: ChatMessage): string {
	const content = message.content;
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('');
	return '';
}

export async function startScriptedModel(
	script: (request: ChatRequest) => ScriptedAnswer,
): Promise<ScriptedModel> {
	const requests: ChatRequest[] = [];
	let calls = 0;
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const path = (req.url ?? '').split('?')[0];
			const send = (status: number, body: unknown) => {
				res.writeHead(status, { 'content-type': 'application/json' });
				res.end(JSON.stringify(body));
			};
			if (req.method === 'GET' && path.endsWith('/models')) {
				send(200, {
					object: 'list',
					data: [{ id: 'gpt-4o-mini', object: 'model', created: 0, owned_by: 'scripted' }],
				});
				return;
			}
			if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
				send(404, {
					error: {
						message: `the scripted model answers chat completions only, not ${req.method} ${path}`,
					},
				});
				return;
			}
			let request: ChatRequest;
			try {
				request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
			} catch {
				send(400, { error: { message: 'body is not JSON' } });
				return;
			}
			requests.push(request);
			let answer: ScriptedAnswer;
			try {
				answer = script(request);
			} catch (error) {
				answer = { text: `SCRIPT ERROR: ${(error as Error).message}` };
			}
			const id = `chatcmpl-scripted-${++calls}`;
			const created = Math.floor(Date.now() / 1000);
			const toolCalls =
				'toolCalls' in answer
					? answer.toolCalls.map((call, index) => ({
							index,
							id: `call_${calls}_${index}`,
							type: 'function',
							function: { name: call.name, arguments: JSON.stringify(call.arguments) },
						}))
					: undefined;
			const finish = toolCalls ? 'tool_calls' : 'stop';
			const content = 'text' in answer ? answer.text : null;
			const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 };
			if (request.stream) {
				res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
				const event = (delta: Record<string, unknown>, finishReason: string | null) =>
					res.write(
						`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
					);
				event(
					{ role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
					null,
				);
				event({}, finish);
				res.write(
					`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [], usage })}\n\n`,
				);
				res.end('data: [DONE]\n\n');
				return;
			}
			send(200, {
				id,
				object: 'chat.completion',
				created,
				model: request.model,
				choices: [
					{
						index: 0,
						message: {
							role: 'assistant',
							content,
							...(toolCalls
								? { tool_calls: toolCalls.map(({ index: _index, ...call }) => call) }
								: {}),
						},
						finish_reason: finish,
					},
				],
				usage,
			});
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		requests,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}
