import type { AppContext } from '../src/context.js';
import { memberJobSchema } from '../src/queue/rebuild-queue.js';
import { reprojectMember } from '../src/services/member-projection.js';

/** The job a moderation change queues before it commits, so Redis catches up even if the process dies after the commit. */
export async function processMemberReprojection(ctx: AppContext, data: unknown): Promise<number> {
  const { member, openOnly } = memberJobSchema.parse(data);
  return reprojectMember(ctx, member, openOnly);
}
