// Wire shape of tag records: the GraphQL selection the tag routes ask for, sent as it is.
export const TAG_FIELDS = `id name description type`;

export const tagRecord = (t: { id: string; name: string; description: string | null; type: string }) => t;
