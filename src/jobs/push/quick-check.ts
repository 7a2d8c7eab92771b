// The quick check lives beside the schema it mirrors, where the sandbox can use it too.
export {
  isIsoDateQuick,
  isIsoDateTimeQuick,
  loanLooksValid,
  paymentLooksValid,
  paymentRulesHold,
} from '../../schema/quick-check.js';
