import { lookup as dnsLookup, type LookupAddress } from 'dns';
import { BlockList, isIP, type LookupFunction } from 'net';
import type { IExecuteFunctions, NodeEgressFilter } from 'n8n-workflow';
import type { Dispatcher } from 'undici';

import { proxyEnvironment, undici, usesProxy } from '../../shared/transport';

/**
 * Where a download (Send File from a URL) may connect, and the connections it uses.
 *
 * - n8n's own egress policy, when the running n8n has one (n8n-workflow 2.41 and later:
 *   `helpers.getSecureEgressFilter()`): every URL and redirect is checked before it is requested
 *   (`validateUrl`, `validateRedirectSync`), and the address connected to by n8n's secure DNS
 *   lookup, as n8n's own HTTP client does. On an n8n without it nothing of this applies.
 * - The node's "Block Private Addresses": loopback, private, link-local and other non-public
 *   addresses are refused, also when written inside an IPv6 address (IPv4-mapped, IPv4-compatible,
 *   NAT64, 6to4, Teredo), checked on the URL before every request (its host resolved) and again on
 *   the address actually connected to.
 * - Proxies: `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` as the gateway transport honours them (undici's
 *   EnvHttpProxyAgent). Through a proxy the proxy resolves the host: the check before the request
 *   is then the only one (a name that resolves differently a moment later is not caught).
 * - One pool per policy and proxy environment, at most a few at once (the least recently used
 *   is closed), each with a bounded number of connections per server.
 */

export interface EgressPolicy {
	/** n8n's egress filter, when the running n8n has one. */
	readonly n8n?: NodeEgressFilter;
	readonly blockPrivateAddresses: boolean;
}

/** n8n's egress filter, when the running n8n has one (feature-detected: older n8n has none). */
export function n8nEgressFilter(ctx: IExecuteFunctions): NodeEgressFilter | undefined {
	const helpers = ctx.helpers as Partial<
		Pick<IExecuteFunctions['helpers'], 'getSecureEgressFilter'>
	>;
	return typeof helpers.getSecureEgressFilter === 'function'
		? helpers.getSecureEgressFilter()
		: undefined;
}

/** The code of the errors this module's refusals carry (a connection refused by policy). */
export const EGRESS_REFUSED = 'ERR_EGRESS_REFUSED';

function refusal(message: string): Error & { code: string } {
	return Object.assign(new Error(message), { code: EGRESS_REFUSED });
}

/**
 * Why `url` may not be requested, or undefined. `redirect`: the URL is a redirect's target
 * (n8n's per-redirect check applies). Resolves the host for "Block Private Addresses".
 */
export async function egressProblem(
	url: URL,
	policy: EgressPolicy,
	redirect: boolean,
): Promise<string | undefined> {
	if (policy.n8n) {
		try {
			if (redirect) policy.n8n.validateRedirectSync(url.toString());
			const checked = await policy.n8n.validateUrl(url);
			if (!checked.ok) return `n8n's outbound policy refuses it (${checked.error.message})`;
		} catch (error) {
			return `n8n's outbound policy refuses it (${(error as Error).message})`;
		}
	}
	if (policy.blockPrivateAddresses) {
		const host = url.hostname.replace(/^\[|\]$/g, '');
		if (isIP(host)) {
			if (!isPublicAddress(host))
				return `${host} is a private or local address, and "Block Private Addresses" is on`;
		} else {
			const refused = await firstPrivateAddress(host);
			if (refused) return refused.message;
		}
	}
	return undefined;
}

async function firstPrivateAddress(host: string): Promise<Error | undefined> {
	return await new Promise((resolve) => {
		publicOnlyLookup(dnsLookup)(host, { all: true }, (error) =>
			resolve(error && (error as { code?: string }).code === EGRESS_REFUSED ? error : undefined),
		);
	});
}

// ---------------------------------------------------------------------------------------------
// Addresses

/** Addresses a download must not reach when "Block Private Addresses" is on. */
const nonPublic = (() => {
	const list = new BlockList();
	for (const [net, prefix] of [
		['0.0.0.0', 8],
		['10.0.0.0', 8],
		['100.64.0.0', 10],
		['127.0.0.0', 8],
		['169.254.0.0', 16],
		['172.16.0.0', 12],
		['192.0.0.0', 24],
		['192.0.2.0', 24],
		['192.168.0.0', 16],
		['198.18.0.0', 15],
		['198.51.100.0', 24],
		['203.0.113.0', 24],
		['224.0.0.0', 4],
		['240.0.0.0', 4],
	] as const) {
		list.addSubnet(net, prefix, 'ipv4');
	}
	for (const [net, prefix] of [
		['::', 128],
		['::1', 128],
		['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): a private network's translator
		['100::', 64], // discard
		['2001::', 23], // IETF protocol assignments (ORCHID, …); Teredo's 2001::/32 is read below
		['2001:db8::', 32], // documentation
		['fc00::', 7], // unique local
		['fe80::', 10], // link-local
		['fec0::', 10], // site-local (deprecated)
		['ff00::', 8], // multicast
	] as const) {
		list.addSubnet(net, prefix, 'ipv6');
	}
	return list;
})();

/** The 8 groups of an IPv6 address (`::` expanded, a dotted IPv4 tail read as two groups). */
function ipv6Groups(address: string): number[] | undefined {
	let text = address.toLowerCase().split('%')[0];
	// A dotted IPv4 tail (`::ffff:127.0.0.1`) as the two groups it stands for.
	const tailAt = text.lastIndexOf(':') + 1;
	const ipv4Tail = text.slice(tailAt);
	if (isIP(ipv4Tail) === 4) {
		const [a, b, c, d] = ipv4Tail.split('.').map(Number);
		text = `${text.slice(0, tailAt)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
	}
	const halves = text.split('::');
	if (halves.length > 2) return undefined;
	const head = halves[0] ? halves[0].split(':') : [];
	const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
	const missing = 8 - head.length - tail.length;
	if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
	const groups = [...head, ...Array<string>(missing).fill('0'), ...tail].map((g) =>
		parseInt(g, 16),
	);
	return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

const ipv4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address carries, where it carries one: IPv4-mapped (`::ffff:a.b.c.d`)
 * and IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64
 * (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::/48`), Teredo (the client's address, inverted).
 */
function embeddedIpv4(groups: number[]): string | undefined {
	const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
	if (zero(0, 5) && groups[5] === 0xffff) return ipv4(groups[6], groups[7]);
	if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) return ipv4(groups[6], groups[7]);
	if (zero(0, 6) && (groups[6] !== 0 || groups[7] > 1)) return ipv4(groups[6], groups[7]);
	if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return ipv4(groups[6], groups[7]);
	if (groups[0] === 0x2002) return ipv4(groups[1], groups[2]);
	if (groups[0] === 0x2001 && groups[1] === 0) return ipv4(groups[6] ^ 0xffff, groups[7] ^ 0xffff);
	return undefined;
}

export function isPublicAddress(address: string): boolean {
	const family = isIP(address);
	if (family === 4) return !nonPublic.check(address, 'ipv4');
	if (family !== 6) return false;
	const groups = ipv6Groups(address);
	if (!groups) return false;
	const carried = embeddedIpv4(groups);
	if (carried !== undefined) return !nonPublic.check(carried, 'ipv4');
	return !nonPublic.check(address.split('%')[0], 'ipv6');
}

/** A DNS lookup (n8n's secure one, or the system's) that also fails for non-public addresses. */
function publicOnlyLookup(base: LookupFunction): LookupFunction {
	return (hostname, options, callback) => {
		base(hostname, { ...options, all: true }, (error, addresses) => {
			if (error) return callback(error, '', 0);
			const list = (Array.isArray(addresses) ? addresses : []) as LookupAddress[];
			const refused = list.find((entry) => !isPublicAddress(entry.address));
			if (refused || list.length === 0) {
				return callback(
					refusal(
						`${hostname} resolves to ${refused?.address ?? 'no address'}, a private or local address, and "Block Private Addresses" is on`,
					),
					'',
					0,
				);
			}
			if ((options as { all?: boolean }).all)
				return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
			return callback(null, list[0].address, list[0].family);
		});
	};
}

// ---------------------------------------------------------------------------------------------
// Connections

/** Pools kept at once; the least recently used one is closed when another is needed. */
const MAX_POOLS = 8;
/** Connections to one file server per pool, whatever the parallelism. */
export const MAX_DOWNLOAD_CONNECTIONS_PER_ORIGIN = 16;
/** Connecting (TCP and TLS) may take this long at most; the download's own deadline may end it sooner. */
const CONNECT_TIMEOUT_MS = 30_000;

const pools = new Map<string, Dispatcher>();
const filterIds = new WeakMap<object, number>();
let nextFilterId = 0;

function policyKey(policy: EgressPolicy): string {
	let n8n = '';
	if (policy.n8n) {
		let id = filterIds.get(policy.n8n);
		if (id === undefined) filterIds.set(policy.n8n, (id = ++nextFilterId));
		n8n = `n8n#${id}`;
	}
	return `${n8n}|${policy.blockPrivateAddresses ? 'blocked' : 'open'}|${proxyEnvironment()}`;
}

/** The pool for this policy under the current proxy environment (made, or reused and marked recent). */
export function poolFor(policy: EgressPolicy): Dispatcher {
	const key = policyKey(policy);
	let pool = pools.get(key);
	if (pool) {
		pools.delete(key);
	} else {
		let lookup: LookupFunction | undefined = policy.n8n?.createSecureLookup();
		if (policy.blockPrivateAddresses) lookup = publicOnlyLookup(lookup ?? dnsLookup);
		const options = {
			keepAliveTimeout: 4_000,
			connections: MAX_DOWNLOAD_CONNECTIONS_PER_ORIGIN,
			connect: { timeout: CONNECT_TIMEOUT_MS, ...(lookup ? { lookup } : {}) },
		};
		pool = usesProxy() ? new (undici().EnvHttpProxyAgent)(options) : new (undici().Agent)(options);
		while (pools.size >= MAX_POOLS) {
			const [oldest, agent] = pools.entries().next().value as [string, Dispatcher];
			pools.delete(oldest);
			// Requests already running on it finish first.
			void agent.close().catch(() => undefined);
		}
	}
	pools.set(key, pool);
	return pool;
}

/** How many pools are open now (tests). */
export function openPools(): number {
	return pools.size;
}

/** Closes the pooled download connections (tests; n8n never needs to). */
export async function closeDownloadConnections(): Promise<void> {
	const closing = [...pools.values()].map(async (agent) => await agent.close());
	pools.clear();
	await Promise.all(closing);
}
