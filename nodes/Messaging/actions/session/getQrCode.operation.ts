import type { INodeProperties } from 'n8n-workflow';

import { forOperation } from '../../../shared/execution/router';
import { endpoints } from '../../../shared/transport';
import { qrImageField, sessionExecute } from '../../helpers/sessionAnswer';

export const description: INodeProperties[] = forOperation('session', 'getQrCode', [qrImageField]);

export const endpoint = endpoints.qr;

export const once = true;

export const execute = sessionExecute(endpoint);
