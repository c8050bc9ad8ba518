/**
 * A test node that reads its parameters for every input item twice, through the package's
 * `ParameterReader` and through n8n's own `getNodeParameter`, inside a real engine run, and
 * records both outcomes (value or error) for the test to compare.
 */
import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodeType,
} from 'n8n-workflow';

import { ParameterReader } from '../../nodes/shared/execution/operationRun';

export type ProbeOutcome = { value: unknown } | { error: string; errorClass: string };

export interface ProbeRecord {
	itemIndex: number;
	name: string;
	reader: ProbeOutcome;
	n8n: ProbeOutcome;
	/** Whether the reader asked n8n's getNodeParameter for this read (a constant is asked once per run, a direct read never). */
	readerAskedN8n: boolean;
}

/** What the last probe runs recorded (tests clear it before a run). */
export const probeRecords: ProbeRecord[] = [];

/** The parameter names the probe reads, with the fallback it passes (set by the test before a run). */
export const probeReads: Array<{ name: string; fallback: unknown }> = [];

function outcome(read: () => unknown): ProbeOutcome {
	try {
		return { value: read() };
	} catch (error) {
		return { error: (error as Error).message, errorClass: (error as Error).constructor.name };
	}
}

export class ParameterProbe implements INodeType {
	description = {
		displayName: 'Parameter Probe',
		name: 'test.parameterProbe',
		group: ['transform'],
		version: 1,
		description: 'Reads its parameters both ways',
		defaults: { name: 'Probe' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [
			{ displayName: 'Value', name: 'value', type: 'string', default: '' },
			{ displayName: 'Number', name: 'number', type: 'number', default: 1 },
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				default: {},
				options: [
					{ displayName: 'Inner', name: 'inner', type: 'string', default: '' },
					{ displayName: 'Count', name: 'count', type: 'number', default: 0 },
				],
			},
			{
				displayName: 'Fields',
				name: 'fields',
				type: 'fixedCollection',
				typeOptions: { multipleValues: true },
				default: {},
				options: [
					{
						displayName: 'Entry',
						name: 'entry',
						values: [
							{ displayName: 'Name', name: 'name', type: 'string', default: '' },
							{ displayName: 'Value', name: 'value', type: 'string', default: '' },
						],
					},
				],
			},
		] as INodeProperties[],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		// The reader gets n8n's context with getNodeParameter counted, to see which reads it handed on.
		let asked = 0;
		const counted = Object.create(this, {
			getNodeParameter: {
				value: (...args: Parameters<IExecuteFunctions['getNodeParameter']>) => (
					asked++,
					this.getNodeParameter(...args)
				),
			},
		}) as IExecuteFunctions;
		const reader = new ParameterReader(counted);
		const items = this.getInputData();
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			for (const { name, fallback } of probeReads) {
				const before = asked;
				const read = outcome(() => reader.value(name, itemIndex, fallback));
				probeRecords.push({
					itemIndex,
					name,
					reader: read,
					n8n: outcome(() => this.getNodeParameter(name, itemIndex, fallback as never) as unknown),
					readerAskedN8n: asked > before,
				});
			}
		}
		return [items.map((item, index) => ({ json: item.json, pairedItem: { item: index } }))];
	}
}
