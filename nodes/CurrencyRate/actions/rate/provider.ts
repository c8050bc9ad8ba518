import type { IExecuteFunctions, INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { inputError, toNodeError } from '../../../shared/errors';
import { showFor } from '../../../shared/operation';
import { ApiError, describeEndpoint, endpoints } from '../../../shared/transport';
import type { RateOperationContext } from '../../context';
import type { RateTable } from '../../rateTable';

/** Provider codes seen in public clients of the service; the service may know more. */
export const KNOWN_PROVIDERS: ReadonlyArray<{ code: string; name: string }> = [
	{ code: 'bca', name: 'Bank Central Asia (BCA)' },
	{ code: 'bni', name: 'Bank Negara Indonesia (BNI)' },
	{ code: 'bri', name: 'Bank Rakyat Indonesia (BRI)' },
	{ code: 'cimb', name: 'CIMB Niaga (CIMB)' },
	{ code: 'kmk', name: 'Tax Office (KMK)' },
];

/** Selector value that shows the free "Provider Code" field. */
const OTHER_PROVIDER = 'other';

const providerOptions: INodePropertyOptions[] = [
	...KNOWN_PROVIDERS.map(({ code, name }) => ({ name, value: code, description: `Rates of ${name}, code "${code}"` })),
	{ name: 'Other Provider (Enter Code)', value: OTHER_PROVIDER, description: 'Any other code the service offers' },
];

/**
 * The provider fields of an operation: a selector of the known codes (an expression may also
 * give any code, e.g. `{{ $json.provider }}`), and a free code field for "Other Provider".
 */
export function providerProperties(operation: string): INodeProperties[] {
	const shown = showFor('rate', operation);
	return [
		{
			displayName: 'Provider',
			name: 'provider',
			type: 'options',
			options: providerOptions,
			default: 'bca',
			description:
				'Whose rates to use. An expression may give any provider code (for example a field of the input item); choose "Other Provider" to type a code the list does not have.',
			displayOptions: shown,
		},
		{
			displayName: 'Provider Code',
			name: 'providerCode',
			type: 'string',
			default: '',
			// Not marked required: n8n would then demand it whenever "Provider" is an expression
			// (it cannot know the expression's value before the run). An empty code fails per item.
			placeholder: 'e.g. mandiri',
			description: 'The code the service knows the provider by (sent as "currency_id_provider")',
			displayOptions: { show: { ...shown.show, provider: [OTHER_PROVIDER] } },
		},
	];
}

/** The item's provider code in the form the service uses (trimmed, lower case). */
export function readProvider(ctx: IExecuteFunctions, itemIndex: number): string {
	const selected = ctx.getNodeParameter('provider', itemIndex, '') as unknown;
	const isOther = selected === OTHER_PROVIDER;
	const field = isOther ? 'Provider Code' : 'Provider';
	const value = isOther ? (ctx.getNodeParameter('providerCode', itemIndex, '') as unknown) : selected;
	const code = typeof value === 'string' || typeof value === 'number' ? String(value).trim().toLowerCase() : '';
	if (code === '') {
		throw inputError(ctx.getNode(), itemIndex, field, 'is empty', `Choose a provider, or enter its code (${knownCodes()}).`);
	}
	if (!/^[a-z0-9][a-z0-9_.-]*$/.test(code)) {
		throw inputError(
			ctx.getNode(),
			itemIndex,
			field,
			`is not a provider code: "${String(value)}"`,
			`Provider codes are single words such as ${knownCodes()}.`,
		);
	}
	return code;
}

/**
 * The provider's rates for this item, from the run's rate book (one request per provider and
 * run). A provider the service refuses gets a description that lists the known codes.
 */
export async function ratesForItem(
	ctx: IExecuteFunctions,
	itemIndex: number,
	{ rates, options }: RateOperationContext,
	provider: string,
): Promise<RateTable> {
	try {
		return await rates.tableFor(provider, options.version);
	} catch (error) {
		if (!isRatesRefusal(error)) throw error;
		const nodeError = toNodeError(ctx.getNode(), error, itemIndex);
		nodeError.description = [
			`The service gave no rates for provider "${provider}". Check the provider code (known codes: ${knownCodes()}) and the "API Version" option ("${options.version}").`,
			error.hint,
		]
			.filter(Boolean)
			.join(' ');
		throw nodeError;
	}
}

/**
 * A refusal or server error of the rates request itself: what an unknown provider code or version
 * gets. Not a failed token request (a wrong secret) and not an auth failure: those say nothing
 * about the provider.
 */
function isRatesRefusal(error: unknown): error is ApiError {
	return (
		error instanceof ApiError &&
		error.endpoint === describeEndpoint(endpoints.getKurs) &&
		!error.authFailure &&
		(error.kind === 'rejected' || error.kind === 'rpc')
	);
}

function knownCodes(): string {
	return KNOWN_PROVIDERS.map((p) => p.code).join(', ');
}
