const KNOWN_PROVIDERS: ReadonlyArray<{ code: string; name: string }> = [
	{ code: 'bca', name: 'Bank Central Asia (BCA)' },
	{ code: 'bni', name: 'Bank Negara Indonesia (BNI)' },
	{ code: 'bri', name: 'Bank Rakyat Indonesia (BRI)' },
	{ code: 'cimb', name: 'CIMB Niaga (CIMB)' },
	{ code: 'kmk', name: 'Tax Office (KMK)' },
];

export function knownProviderCodes(): string {
	return KNOWN_PROVIDERS.map((provider) => provider.code).join(', ');
}

export const OTHER_PROVIDER = 'other';

export const PROVIDER_OPTIONS: ReadonlyArray<{ name: string; value: string; description: string }> =
	[
		...KNOWN_PROVIDERS.map(({ code, name }) => ({
			name,
			value: code,
			description: `Rates of ${name}, code "${code}"`,
		})),
		{
			name: 'Other Provider (Enter Code)',
			value: OTHER_PROVIDER,
			description: 'Any other code the service offers',
		},
	];

/** n8n shows no ✨ button on a dropdown, but shows this expression as "defined by the model". */
export const PROVIDER_FROM_AI = `{{ $fromAI('provider', 'Rate provider code: ${KNOWN_PROVIDERS.map((p) => p.code).join(', ')}', 'string') }}`;

/** "Bank Central Asia (BCA)" → "Bank Central Asia", by string operations: no pattern to audit. */
function withoutCode(name: string): string {
	const open = name.lastIndexOf('(');
	return open !== -1 && name.endsWith(')') ? name.slice(0, open).trimEnd() : name;
}

export function providerCodeOf(value: unknown): { code: string } | { problem: string } {
	const text = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
	if (text === '') return { problem: 'is empty' };
	const lower = text.toLowerCase();
	const known = KNOWN_PROVIDERS.find(
		({ name }) => lower === name.toLowerCase() || lower === withoutCode(name).toLowerCase(),
	);
	const code = known ? known.code : lower;
	if (!/^[a-z0-9][a-z0-9_.-]*$/.test(code) || code.length > 64)
		return { problem: `is not a provider code: "${text.slice(0, 80)}"` };
	return { code };
}
