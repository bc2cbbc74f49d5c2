// The types of custom fields (end users') and integration attributes, and a schema entry: a leaf
// module, so that what reads schemas (segment rules) and what writes them need not import each other.
export const FIELD_TYPES = ["string", "double", "boolean", "timestamp", "encrypted_string"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface SchemaField {
  name: string;
  type: FieldType;
  description: string | null;
  default: boolean;
}
