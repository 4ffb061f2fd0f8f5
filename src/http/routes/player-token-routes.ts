import type { IRouter } from 'express';
import type { PlayerTokens } from '../../services/player-tokens.js';
import { requireRole } from '../auth.js';

/** Player tokens, minted by a game server for its clients (which then read as their member). */
export function playerTokenRoutes(router: IRouter, tokens: PlayerTokens): void {
  router.post('/v1/player-tokens', requireRole('ingest'), async (req, res) => {
    res.status(201).json(await tokens.mint(req.body));
  });
}
