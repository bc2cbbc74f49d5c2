// What an end user has already completed, for a segment's personalised content order.
// Engagement events (the events domain) are the source; until an account has any, nothing is completed.
export async function completedContent(_accountId: string, _endUserId: string, _segmentId: string): Promise<Set<string>> {
  return new Set();
}
