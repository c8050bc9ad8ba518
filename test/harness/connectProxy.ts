/**
 * A forward proxy on loopback that speaks CONNECT (what undici's ProxyAgent asks of HTTP_PROXY)
 * and forwards plain-HTTP requests (what n8n's HTTP helper sends a proxy for an http:// address),
 * counting both: tests set HTTP_PROXY to `url` and check that requests went through it.
 */
import http from 'http';
import net, { type AddressInfo, type Socket } from 'net';

export interface ConnectProxy {
	readonly url: string;
	/** Tunnels opened so far, with their targets (`host:port`). */
	readonly tunnels: string[];
	/** Plain-HTTP requests forwarded so far (their absolute URLs). */
	readonly forwarded: string[];
	close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
	const tunnels: string[] = [];
	const forwarded: string[] = [];
	const open = new Set<Socket>();
	const proxy = http.createServer((req, res) => {
		if (!req.url?.startsWith('http://')) {
			res.writeHead(405).end();
			return;
		}
		forwarded.push(req.url);
		const upstream = http.request(
			req.url,
			{ method: req.method, headers: req.headers },
			(answer) => {
				res.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(res);
			},
		);
		upstream.on('error', () => res.destroy());
		res.on('close', () => upstream.destroy());
		req.pipe(upstream);
	});
	proxy.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
		tunnels.push(req.url ?? '');
		const [host, port] = (req.url ?? '').split(':');
		open.add(client);
		const upstream = net.connect(Number(port), host, () => {
			client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
			upstream.write(head);
			upstream.pipe(client);
			client.pipe(upstream);
		});
		open.add(upstream);
		upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
		client.on('error', () => upstream.destroy());
	});
	await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
		tunnels,
		forwarded,
		close: async () => {
			for (const socket of open) socket.destroy();
			proxy.closeAllConnections();
			await new Promise<void>((resolve) => proxy.close(() => resolve()));
		},
	};
}

/** Sets proxy variables for a test and puts the previous ones back (returned function). */
export function withProxyEnvironment(values: Record<string, string | undefined>): () => void {
	const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
	const apply = (from: Record<string, string | undefined>) => {
		for (const [name, value] of Object.entries(from)) {
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		}
	};
	apply(values);
	return () => apply(saved);
}

export interface DroppingProxy {
	readonly url: string;
	/** Connections accepted (and closed at once) so far. */
	connections(): number;
	close(): Promise<void>;
}

/** A proxy that has crashed behind its port, or a firewall's reset: accepts, then closes. */
export async function startDroppingProxy(): Promise<DroppingProxy> {
	let connections = 0;
	const server = net.createServer((socket) => {
		connections++;
		socket.destroy();
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		connections: () => connections,
		close: async () => await new Promise<void>((resolve) => server.close(() => resolve())),
	};
}
