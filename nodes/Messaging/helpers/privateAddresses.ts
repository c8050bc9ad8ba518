import { promises as dns } from 'dns';
import { BlockList, isIP } from 'net';

/**
 * Block Private Addresses: the host of a download's URL, resolved here, must not be loopback,
 * private, link-local or otherwise non-public, also when such an IPv4 address is written inside an
 * IPv6 one. n8n's HTTP helper takes no DNS lookup of ours, so the address it then connects to is
 * not checked again: a name that resolves elsewhere a moment later (DNS rebinding) is not caught.
 */

const NON_PUBLIC_IPV4 = [
	'0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24',
	'192.0.2.0/24 192.168.0.0/16 198.18.0.0/15 198.51.100.0/24 203.0.113.0/24 224.0.0.0/4 240.0.0.0/4',
];
// Unspecified, loopback, local-use NAT64, discard, IETF assignments (Teredo and ORCHID among
// them), documentation, unique local, link-local, site-local, multicast.
const NON_PUBLIC_IPV6 =
	'::/128 ::1/128 64:ff9b:1::/48 100::/64 2001::/23 2001:db8::/32 fc00::/7 fe80::/10 fec0::/10 ff00::/8';

const nonPublic = (() => {
	const list = new BlockList();
	const group = (high: number, low: number) => ((high << 8) | low).toString(16);
	for (const range of NON_PUBLIC_IPV4.join(' ').split(' ')) {
		const [net, prefix] = range.split('/');
		const [a, b, c, d] = net.split('.').map(Number);
		const tail = `${group(a, b)}:${group(c, d)}`;
		list.addSubnet(net, Number(prefix), 'ipv4');
		// The same addresses inside IPv6: mapped, translated, compatible, NAT64, 6to4.
		for (const head of ['::ffff:', '::ffff:0:', '::', '64:ff9b::'])
			list.addSubnet(`${head}${tail}`, 96 + Number(prefix), 'ipv6');
		list.addSubnet(`2002:${tail}::`, 16 + Number(prefix), 'ipv6');
	}
	for (const range of NON_PUBLIC_IPV6.split(' ')) {
		const [net, prefix] = range.split('/');
		list.addSubnet(net, Number(prefix), 'ipv6');
	}
	return list;
})();

function isPublicAddress(address: string): boolean {
	const bare = address.split('%')[0];
	const family = isIP(bare);
	return family !== 0 && !nonPublic.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why Block Private Addresses refuses the URL's host, or undefined. */
export async function privateAddressProblem(url: URL): Promise<string | undefined> {
	const host = url.hostname.replace(/^\[|\]$/g, '');
	const on = 'and "Block Private Addresses" is on';
	if (isIP(host))
		return isPublicAddress(host) ? undefined : `${host} is a private or local address, ${on}`;
	// A name that does not resolve here is refused, not handed on to a proxy that would resolve it.
	const addresses = await dns.lookup(host, { all: true }).catch(() => []);
	if (addresses.length === 0)
		return `${host} does not resolve here, so it cannot be checked, ${on}`;
	const refused = addresses.find(({ address }) => !isPublicAddress(address));
	return refused && `${host} resolves to ${refused.address}, a private or local address, ${on}`;
}
