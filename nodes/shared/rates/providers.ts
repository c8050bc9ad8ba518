/** Rate provider codes seen in public clients of the service; the service may know more. */
const KNOWN_PROVIDERS: ReadonlyArray<{ code: string; name: string }> = [
	{ code: 'bca', name: 'Bank Central Asia (BCA)' },
	{ code: 'bni', name: 'Bank Negara Indonesia (BNI)' },
	{ code: 'bri', name: 'Bank Rakyat Indonesia (BRI)' },
	{ code: 'cimb', name: 'CIMB Niaga (CIMB)' },
	{ code: 'kmk', name: 'Tax Office (KMK)' },
];

/** `bca, bni, bri, cimb, kmk`: for messages that tell the user what to type. */
export function knownProviderCodes(): string {
	return KNOWN_PROVIDERS.map((provider) => provider.code).join(', ');
}

/** Selector value that shows a free "Provider Code" field. */
export const OTHER_PROVIDER = 'other';

/** The Provider selector's entries: the known providers, then "Other Provider (Enter Code)". */
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

/**
 * The `$fromAI` line that lets an AI agent fill a Provider field (n8n's editor shows no ✨ button
 * on a dropdown, but shows this expression as "defined by the model" once it is entered).
 */
export const PROVIDER_FROM_AI = `{{ $fromAI('provider', 'Rate provider code: ${KNOWN_PROVIDERS.map((p) => p.code).join(', ')}', 'string') }}`;

/**
 * A provider code in the form the service uses (trimmed, lower case), or the problem with it.
 * Accepts what a person or a model may write for a known provider: the code in any case, the
 * bank's name or "Name (CODE)" as the selector shows it.
 */
/** "Bank Central Asia (BCA)" → "Bank Central Asia" (string operations: no pattern to audit). */
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
