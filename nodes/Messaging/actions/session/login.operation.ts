import type { INodeProperties } from 'n8n-workflow';

import { forOperation } from '../../../shared/execution/router';
import { endpoints } from '../../../shared/transport';
import { qrImageField, sessionExecute } from '../../helpers/sessionAnswer';

export const description: INodeProperties[] = forOperation('session', 'login', [qrImageField]);

export const endpoint = endpoints.login;

export const once = true;

export const execute = sessionExecute(endpoint);
