import type { ChatWait } from '../shared/chatWaits';

const MAX_TEXT_REPLY = 4000;
const MAX_APPROVAL_REPLY = 200;

export type ReplyAnswer = { approved: boolean } | { text: string };

/**
 * What a reply answers, or undefined when it answers nothing (the question keeps waiting). Letter
 * case, surrounding spaces and one closing "." or "!" do not count.
 */
export function replyAnswer(
	wait: Pick<ChatWait, 'responseType' | 'single' | 'approveLabel' | 'declineLabel'>,
	text: string,
): ReplyAnswer | undefined {
	const trimmed = text.trim();
	if (wait.responseType === 'freeText')
		return trimmed && trimmed.length <= MAX_TEXT_REPLY ? { text: trimmed } : undefined;
	if (trimmed.length > MAX_APPROVAL_REPLY) return undefined;
	const word = (value: string) => value.trim().replace(/[.!]$/, '').trim().toLowerCase();
	const said = word(trimmed);
	if (['1', 'yes', word(wait.approveLabel)].includes(said)) return { approved: true };
	if (!wait.single && ['2', 'no', word(wait.declineLabel)].includes(said))
		return { approved: false };
	return undefined;
}

export const reaskText = (wait: Pick<ChatWait, 'single'>) =>
	wait.single ? 'Please reply 1' : 'Please reply 1 or 2';
