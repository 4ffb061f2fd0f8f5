import type { AppContext } from '../context.js';
import type { MemberJob } from '../queue/rebuild-queue.js';
import { reprojectMember } from '../services/member-projection.js';

/** The job a moderation change queues before it commits, so Redis catches up even if the process dies after the commit. */
export async function processMemberReprojection(ctx: AppContext, { member, openOnly }: MemberJob): Promise<number> {
  return reprojectMember(ctx, member, openOnly);
}
