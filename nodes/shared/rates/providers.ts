/** Rate provider codes seen in public clients of the service; the service may know more. */
export const KNOWN_PROVIDERS: ReadonlyArray<{ code: string; name: string }> = [
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
