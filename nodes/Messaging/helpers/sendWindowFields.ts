import { IANAZone } from 'luxon';
import type { IDataObject, INodeProperties } from 'n8n-workflow';

import { shown } from '../../shared/errors';
import { WEEKDAYS, type SendWindow } from './sendWindow';

// Send Only Between's fields and their reader: the send option and Wait for Send Window's
// parameters are the same fields.

export function sendWindowFields(): INodeProperties[] {
	return [
		{
			displayName: 'Start',
			name: 'start',
			type: 'string',
			default: '08:00',
			placeholder: '08:00',
			description: 'When the window opens each day, as HH:MM (24-hour clock) in the time zone',
		},
		{
			displayName: 'End',
			name: 'end',
			type: 'string',
			default: '20:00',
			placeholder: '20:00',
			description:
				'When the window closes, as HH:MM; earlier than Start means the next day (22:00 to 06:00 runs overnight)',
		},
		{
			displayName: 'Days',
			name: 'days',
			type: 'multiOptions',
			options: WEEKDAYS.map(([name, value]) => ({ name, value })),
			default: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
			description: 'The days on which the window opens',
		},
		{
			displayName: 'Time Zone',
			name: 'timeZone',
			type: 'string',
			default: '',
			placeholder: 'Asia/Jakarta',
			description:
				"An IANA time zone such as Asia/Jakarta or Europe/Berlin. Empty: the workflow's time zone (Settings), else n8n's (GENERIC_TIMEZONE).",
		},
	];
}

export type WindowProblem = { field: string; problem: string; fix: string };

export function readSendWindow(
	fields: IDataObject,
	fallbackZone: string,
): SendWindow | WindowProblem {
	const start = minutesOf(fields.start ?? '08:00');
	if (start === undefined)
		return {
			field: 'Start',
			problem: `is not a time of day (${shown(fields.start)})`,
			fix: 'Write it as HH:MM on a 24-hour clock, e.g. 08:00.',
		};
	const end = minutesOf(fields.end ?? '20:00');
	if (end === undefined)
		return {
			field: 'End',
			problem: `is not a time of day (${shown(fields.end)})`,
			fix: 'Write it as HH:MM on a 24-hour clock, e.g. 20:00 (24:00 for midnight).',
		};
	if (start % 1440 === end % 1440 && !(start === 0 && end === 1440))
		return {
			field: 'End',
			problem: 'is the same as Start, so the window never opens',
			fix: 'Give the window a length, or remove Send Only Between to send at any time.',
		};
	const dayValues = daysGiven(fields.days);
	if (!dayValues)
		return {
			field: 'Days',
			problem: `is not a list of days (${shown(fields.days)})`,
			fix: 'Pick days from the list, or map text such as "mon,tue,wed".',
		};
	const days = new Set<number>();
	for (const value of dayValues) {
		const index = WEEKDAYS.findIndex(
			([name, day]) =>
				typeof value === 'string' && [day, name.toLowerCase()].includes(value.toLowerCase()),
		);
		if (index < 0)
			return {
				field: 'Days',
				problem: `holds ${shown(value)}, which is no day`,
				fix: `Pick days from the list (${WEEKDAYS.map(([, day]) => day).join(', ')}).`,
			};
		days.add(index + 1);
	}
	if (days.size === 0)
		return {
			field: 'Days',
			problem: 'is empty, so the window never opens',
			fix: 'Pick at least one day.',
		};
	const given = typeof fields.timeZone === 'string' ? fields.timeZone.trim() : '';
	const timeZone = given || fallbackZone;
	if (!IANAZone.isValidZone(timeZone))
		return {
			field: 'Time Zone',
			problem: `is not a known time zone (${shown(timeZone)})`,
			fix: 'Use an IANA name such as Asia/Jakarta, Europe/Berlin or UTC.',
		};
	return { start: start % 1440, end, days, timeZone };
}

/** Not given: every day. Text (a mapped "mon,tue,wed") is split, never taken as every day. */
function daysGiven(value: unknown): unknown[] | undefined {
	if (value === undefined || value === null) return WEEKDAYS.map(([, day]) => day);
	if (Array.isArray(value)) return value;
	if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
	return undefined;
}

function minutesOf(value: unknown): number | undefined {
	if (typeof value !== 'string') return undefined;
	const match = /^([01]?\d|2[0-4]):([0-5]\d)$/.exec(value.trim());
	if (!match) return undefined;
	const minutes = Number(match[1]) * 60 + Number(match[2]);
	return minutes <= 1440 ? minutes : undefined;
}
