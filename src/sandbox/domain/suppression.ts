import type { LegacyLead, ListType } from '../../schema/index.js';

/**
 * The values of a lead that are checked against the account's lists, by list type:
 * SSN and its last four, email, every phone of the applicant (home, cell, work phones),
 * ZIP, every bank routing number, every employer name, and the affiliate id.
 */
export function suppressionCandidates(lead: LegacyLead): [ListType, string][] {
  const out: [ListType, string][] = [
    ['Social Security Numbers', lead.social_security_number],
    ['Last Four of Social Security Numbers', lead.social_security_number.slice(-4)],
    ['Email Addresses', lead.email],
    ['Telephone Numbers', lead.home_phone],
    ['ZIP Codes', lead.zip],
    ['Affiliates', lead.affiliate_id],
  ];
  if (lead.cell_phone) out.push(['Telephone Numbers', lead.cell_phone]);
  for (const source of lead.income_sources ?? []) {
    if (source.work_phone) out.push(['Telephone Numbers', source.work_phone]);
    if (source.employer_name) out.push(['Employer Names', source.employer_name]);
  }
  for (const account of lead.bank_accounts ?? []) out.push(['Bank Routing Numbers', account.bank_routing_number]);
  return out;
}

/** The first list type the lead is on, or undefined when it is on none. */
export function suppressedBy(
  lead: LegacyLead,
  isListed: (type: ListType, value: string) => boolean,
): ListType | undefined {
  return suppressionCandidates(lead).find(([type, value]) => isListed(type, value))?.[0];
}

/**
 * Price reject offers for a campaign price: one to three (how many follows the lead id, so
 * runs are repeatable), each a quarter of the price lower than the one before, highest first.
 */
export function offerPrices(campaignPrice: number, leadSequence: number): number[] {
  const count = (leadSequence % 3) + 1;
  return Array.from({ length: count }, (_, i) => Math.round(campaignPrice * (1 - (i + 1) * 0.25) * 100) / 100);
}
