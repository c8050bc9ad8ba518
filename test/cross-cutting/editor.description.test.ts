/**
 * What the editor shows a newcomer, read from the node descriptions as n8n reads them:
 * - the canvas subtitles, evaluated the way n8n's editor evaluates them: the `subtitle`
 *   expression through n8n-workflow's `getSimpleParameterValue` on a workflow holding the node,
 *   with the node's parameters (defaults filled in by n8n);
 * - the visible hints under the fields a first run most often gets wrong;
 * - the node picker's entries: their names and descriptions.
 */
import {
	NodeHelpers,
	Workflow,
	type INode,
	type INodeParameters,
	type INodeProperties,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { MessagingRateApi } from '../../credentials/MessagingRateApi.credentials';
import { packageNodeDescriptions } from '../../scripts/docs';
import { PACKAGE, nodeTypes } from '../harness/engine';
import { resources as messagingResources } from '../../nodes/Messaging/Messaging.node';

type NodeName = 'messaging' | 'currencyRate';

/** What the canvas shows under a node with these parameters (undefined: n8n would show none). */
function subtitleOf(type: NodeName, parameters: INodeParameters): unknown {
	const nodeType = nodeTypes.getByNameAndVersion(`${PACKAGE}.${type}`, 1);
	const { subtitle } = nodeType.description;
	if (subtitle === undefined) throw new Error(`${type} has no subtitle`);
	// The editor stores a new node's parameters with their defaults, as n8n computes them.
	const withDefaults =
		NodeHelpers.getNodeParameters(
			nodeType.description.properties,
			parameters,
			true,
			false,
			null,
			nodeType.description,
		) ?? {};
	const node: INode = {
		id: '1',
		name: 'Node',
		type: `${PACKAGE}.${type}`,
		typeVersion: 1,
		position: [0, 0],
		parameters: withDefaults,
	};
	const workflow = new Workflow({
		id: 'w',
		nodes: [node],
		connections: {},
		nodeTypes,
		active: false,
	});
	try {
		return workflow.expression.getSimpleParameterValue(node, subtitle, 'internal', {});
	} catch {
		// n8n's editor shows no subtitle when its expression throws.
		return undefined;
	}
}

describe('Messaging subtitle', () => {
	it.each([
		['message', 'sendText', 'Send Text'],
		['message', 'sendFile', 'Send File'],
		['number', 'check', 'Check Number'],
		['account', 'check', 'Check Account'],
		['account', 'update', 'Update Account'],
		['session', 'getQrCode', 'Get QR Code'],
		['auth', 'getToken', 'Get Token'],
	])('%s → %s shows "%s"', (resource, operation, expected) => {
		expect(subtitleOf('messaging', { resource, operation })).toBe(expected);
	});

	it('names every operation, and no two alike', () => {
		const shown = messagingResources.flatMap((resource) =>
			resource.operations.map((operation) =>
				subtitleOf('messaging', { resource: resource.option.value, operation: operation.value }),
			),
		);
		expect(shown.every((text) => typeof text === 'string' && text.length > 0)).toBe(true);
		expect(new Set(shown).size).toBe(shown.length);
	});

	it('shows the operation of a new node (the defaults)', () => {
		expect(subtitleOf('messaging', {})).toBe('Send Text');
	});
});

describe('Currency Rate subtitle', () => {
	it('Convert shows the provider and the pair', () => {
		expect(
			subtitleOf('currencyRate', {
				resource: 'rate',
				operation: 'convert',
				provider: 'bca',
				fromCurrency: 'usd',
				toCurrency: 'IDR',
			}),
		).toBe('BCA · USD → IDR');
	});

	it('a new Convert node shows its defaults', () => {
		expect(subtitleOf('currencyRate', { resource: 'rate', operation: 'convert' })).toBe(
			'BCA · USD → IDR',
		);
	});

	it('Get shows the provider and the currencies, or all of them', () => {
		expect(
			subtitleOf('currencyRate', {
				resource: 'rate',
				operation: 'get',
				provider: 'kmk',
				currencies: 'usd, eur',
			}),
		).toBe('KMK · USD, EUR');
		expect(
			subtitleOf('currencyRate', {
				resource: 'rate',
				operation: 'get',
				provider: 'bni',
				currencies: '',
			}),
		).toBe('BNI · all currencies');
		expect(
			subtitleOf('currencyRate', {
				resource: 'rate',
				operation: 'get',
				currencies: 'USD EUR SGD JPY AUD',
			}),
		).toBe('BCA · USD, EUR, SGD +2');
	});

	it('an Other Provider shows its code', () => {
		expect(
			subtitleOf('currencyRate', {
				resource: 'rate',
				operation: 'convert',
				provider: 'other',
				providerCode: 'mandiri',
				fromCurrency: 'SGD',
				toCurrency: 'USD',
			}),
		).toBe('MANDIRI · SGD → USD');
	});

	it('fields given by expressions known only at run time are left out, not shown raw', () => {
		const mapped = {
			resource: 'rate',
			operation: 'convert',
			provider: '={{ $json.provider }}',
			fromCurrency: '={{ $json.from }}',
			toCurrency: 'IDR',
		};
		expect(subtitleOf('currencyRate', mapped)).toBe('Convert');
		const fromAi = {
			resource: 'rate',
			operation: 'convert',
			provider: "={{ $fromAI('provider', 'Rate provider code', 'string') }}",
		};
		expect(subtitleOf('currencyRate', fromAi)).toBe('USD → IDR');
		expect(
			subtitleOf('currencyRate', {
				resource: 'rate',
				operation: 'get',
				provider: 'bca',
				currencies: '={{ $json.codes }}',
			}),
		).toBe('BCA · Get');
	});

	it('an expression the editor can resolve is shown resolved', () => {
		expect(
			subtitleOf('currencyRate', {
				resource: 'rate',
				operation: 'convert',
				provider: "={{ 'bri' }}",
				fromCurrency: 'EUR',
				toCurrency: 'IDR',
			}),
		).toBe('BRI · EUR → IDR');
	});

	it('Auth → Get Token shows its name', () => {
		expect(subtitleOf('currencyRate', { resource: 'auth', operation: 'getToken' })).toBe(
			'Get Token',
		);
	});
});

/** The fields of a node shown for these parameters, as n8n decides it (displayOptions). */
function shownFields(
	type: NodeName | 'messagingTrigger',
	parameters: INodeParameters,
): INodeProperties[] {
	const { description } = nodeTypes.getByNameAndVersion(`${PACKAGE}.${type}`, 1);
	const values =
		NodeHelpers.getNodeParameters(
			description.properties,
			parameters,
			true,
			false,
			null,
			description,
		) ?? {};
	return description.properties.filter((property) =>
		NodeHelpers.displayParameter(values, property, null, null),
	);
}

function hintOf(
	type: NodeName | 'messagingTrigger',
	parameters: INodeParameters,
	field: string,
): string | undefined {
	const property = shownFields(type, parameters).find(
		(candidate) => candidate.displayName === field,
	);
	if (!property) throw new Error(`${field} is not shown for ${JSON.stringify(parameters)}`);
	return property.hint;
}

describe('visible hints where a first run goes wrong', () => {
	it.each([
		[{ resource: 'message', operation: 'sendText' }, 'Phone Number'],
		[{ resource: 'message', operation: 'sendFile' }, 'Phone Number'],
		[{ resource: 'number', operation: 'check' }, 'Phone Number'],
		[{ resource: 'account', operation: 'update' }, 'WhatsApp Number'],
		[{ resource: 'account', operation: 'check' }, 'WhatsApp Number'],
	])('Messaging %j: "%s" asks for the country code or Default Country', (parameters, field) => {
		expect(hintOf('messaging', parameters, field)).toMatch(/country code.*"Default Country"/);
	});

	it('Currency Rate → Get: an empty "Currencies" means all of them', () => {
		expect(hintOf('currencyRate', { resource: 'rate', operation: 'get' }, 'Currencies')).toMatch(
			/^Empty = all currencies/,
		);
	});

	it('Messaging Trigger: an empty "Message Types" means all of them; the account number needs its country code', () => {
		expect(hintOf('messagingTrigger', {}, 'Message Types')).toBe('Empty = all message types');
		expect(hintOf('messagingTrigger', {}, 'Account Number')).toMatch(/country code/);
	});

	it('Session operations say where the QR image is and how to scan it', () => {
		for (const operation of ['getQrCode', 'getStatus', 'login']) {
			expect(
				hintOf('messaging', { resource: 'session', operation }, 'Put QR Image in Field'),
			).toMatch(/Binary tab.*Linked devices/);
		}
	});

	it('the credential says Base URL is only the address', () => {
		const baseUrl = new MessagingRateApi().properties.find(
			(property) => property.name === 'baseUrl',
		);
		expect(baseUrl?.hint).toMatch(/without \/api\//);
	});
});

describe('the delays a send offers', () => {
	/** The Options a Messaging node shows for an operation, by display name. */
	function optionsShown(resource: string, operation: string, typeVersion = 1): string[] {
		const { description } = nodeTypes.getByNameAndVersion(`${PACKAGE}.messaging`, typeVersion);
		const values = { resource, operation, options: {} };
		return description.properties
			.filter(
				(property) =>
					property.name === 'options' &&
					NodeHelpers.displayParameter(values, property, { typeVersion }, description),
			)
			.flatMap((collection) => collection.options as INodeProperties[])
			.filter((option) =>
				NodeHelpers.displayParameter(values, option, { typeVersion }, description, values),
			)
			.map((option) => option.displayName);
	}
	const delays = (names: string[]) => names.filter((name) => name.startsWith('Delay'));

	it('a send shows one delay: Delay Between Messages', () => {
		expect(delays(optionsShown('message', 'sendText'))).toEqual(['Delay Between Messages']);
		expect(delays(optionsShown('message', 'sendFile'))).toEqual(['Delay Between Messages']);
	});

	it('a read shows Delay Between Requests', () => {
		expect(delays(optionsShown('number', 'check'))).toEqual(['Delay Between Requests (Ms)']);
	});
});

/**
 * The node picker's entries, by n8n 2.40.7's rules (read in its editor bundle: the node creator's
 * merge of nodes and actions, its trigger actions, its node item's name): a trigger whose name
 * without "Trigger" is a node with actions joins that node's entry, which then shows the
 * trigger's description; an entry with more than one action drops "Trigger" from its name.
 */
function pickerEntries(nodes: INodeTypeDescription[]) {
	const isTrigger = (node: INodeTypeDescription) => node.group.includes('trigger');
	const actionsOf = (node: INodeTypeDescription): number => {
		if (!isTrigger(node))
			return node.properties
				.filter((property) => property.name === 'operation')
				.flatMap((property) => property.options ?? []).length;
		if (!node.displayName.toLowerCase().includes('trigger')) return 0;
		const events = node.properties.find((property) =>
			['event', 'events', 'trigger on'].includes(property.displayName.toLowerCase()),
		);
		// Without such a field n8n offers one action, "On new … event".
		return events?.options?.filter((option) => !['*', '', ' '].includes(option.name)).length ?? 1;
	};
	const entries = nodes
		.filter((node) => !isTrigger(node))
		.map((node) => ({ node, description: node.description, actions: actionsOf(node) }));
	for (const trigger of nodes.filter(isTrigger)) {
		const merged = entries.find(
			(entry) => entry.node.name === trigger.name.replace('Trigger', '') && entry.actions > 0,
		);
		if (merged) {
			merged.description = trigger.description;
			merged.actions += actionsOf(trigger);
		} else
			entries.push({
				node: trigger,
				description: trigger.description,
				actions: actionsOf(trigger),
			});
	}
	return entries.map(({ node, description, actions }) => {
		const name = node.displayName.trimEnd();
		return { name: actions > 1 ? name.replace('Trigger', '') : name, description, node };
	});
}

describe('the node picker', () => {
	const entries = pickerEntries(packageNodeDescriptions().map(({ description }) => description));

	it('lists three entries: Messaging and Currency Rate with their triggers, and the account trigger', () => {
		expect(entries.map(({ name }) => name.trim()).sort()).toEqual([
			'Currency Rate',
			'Messaging',
			'Messaging Account Trigger',
		]);
	});

	it('shows every entry under its own description, and no name with a space at either end', () => {
		expect(entries.map(({ name, description }) => ({ name, description }))).toEqual(
			entries.map(({ node }) => ({ name: node.displayName.trim(), description: node.description })),
		);
	});
});

/** Every text of a node's description: names, descriptions, hints, notices, the trigger panel's. */
function textsOf(value: unknown): string[] {
	if (typeof value === 'string') return [value];
	if (Array.isArray(value)) return value.flatMap(textsOf);
	if (value !== null && typeof value === 'object') return Object.values(value).flatMap(textsOf);
	return [];
}

it('every text that says "activate" (n8n 1.x) also says "publish" (n8n 2.x)', () => {
	const activating = packageNodeDescriptions().flatMap(({ description }) =>
		textsOf(description).filter((text) => /\bactiv/i.test(text)),
	);
	expect(activating.length).toBeGreaterThan(5);
	expect(activating.filter((text) => !/\bpublish/i.test(text))).toEqual([]);
});
