/**
 * What a failed powercfg call means. powercfg exits with 1 for every kind of failure and writes a
 * localized sentence, so the exit code only says *that* it failed; the kind is read from stable
 * tokens where there is one (`/?` in the usage error) and otherwise from the phrases Windows uses
 * for these messages in the languages we know. Callers add locale-free checks on top (e.g. "is the
 * GUID in `/list`?") so that an unknown language still ends in the right error.
 */

export type PowercfgFailure = 'forbidden' | 'not_found' | 'invalid_parameters' | 'unknown';

/**
 * "This command requires administrator privileges and must be executed from an elevated command
 * prompt." and the Win32 "Access is denied." (ERROR_ACCESS_DENIED). en-US and zh-CN are captured
 * (test/fixtures/powercfg-errors); the others are the words Windows uses for "administrator" and
 * "access denied" in those languages, matched as fragments so small wording changes still match.
 */
const forbiddenPhrases = [
  'administrator privileges',
  'elevated',
  'access is denied',
  '管理员权限', // zh-CN, captured
  '提升的命令提示符', // zh-CN, captured
  '拒绝访问',
  '系統管理員', // zh-TW
  '存取被拒',
  '管理者', // ja-JP
  'アクセスが拒否',
  '관리자', // ko-KR
  '액세스가 거부',
  'administrator', // de-DE (Administratorrechte, Administratorberechtigungen), nl, sv, ...
  'zugriff verweigert',
  'administrateur', // fr-FR
  'accès refusé',
  'administrador', // es, pt
  'acceso denegado',
  'acesso negado',
  'amministratore', // it-IT
  'accesso negato',
  'администратор', // ru-RU
  'отказано в доступе',
  'administratora', // pl-PL
  'odmowa dostępu',
];

/**
 * "The power scheme, subgroup or setting specified does not exist." (en-US, captured) and the
 * usual translations of "does not exist" / "not found".
 */
const notFoundPhrases = [
  'does not exist',
  'not found',
  '不存在', // zh-CN, zh-TW
  '存在しません', // ja-JP
  '존재하지 않', // ko-KR
  'nicht vorhanden', // de-DE
  'existiert nicht',
  "n'existe pas", // fr-FR
  'no existe', // es
  'não existe', // pt
  'non esiste', // it-IT
  'не существует', // ru-RU
  'nie istnieje', // pl-PL
];

/**
 * Classifies the combined stderr/stdout of a failed call. Elevation is checked first: the
 * elevation message is what a non-admin gets even for a scheme that does not exist.
 */
export const classifyPowercfgFailure = (text: string): PowercfgFailure => {
  const lower = text.toLowerCase();
  if (forbiddenPhrases.some((p) => lower.includes(p))) return 'forbidden';
  if (notFoundPhrases.some((p) => lower.includes(p))) return 'not_found';
  // `Invalid Parameters -- try "/?" for help`: the `/?` survives translation.
  if (lower.includes('"/?"') || lower.includes('/?')) return 'invalid_parameters';
  return 'unknown';
};
