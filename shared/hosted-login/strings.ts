import type { FlowErrorCode } from "../login/types.ts";

/**
 * Every word the hosted login page shows, by language. The page handler puts one language's table
 * into the page; the page script reads nothing else. `{name}` marks a value the script fills in.
 */

const en = {
  title: "Sign in",
  heading: "Sign in to {domain}",
  headingNoDomain: "Sign in",
  opening: "Opening your sign-in…",
  discovering: "Opening the sign-in page of {domain}…",
  working: "Signing in…",
  reconnecting: "The connection dropped. Reconnecting…",
  submit: "Continue",
  fieldsLegend: "Enter your details",
  fieldLabels: {
    identifier: "Email or username",
    password: "Password",
    code: "Verification code",
    totp_code: "Code from your authenticator app",
    totp_secret: "Authenticator setup key",
    text: "Answer",
  },
  codeHint: "Enter the code the site sent you.",
  totpHint: "Open your authenticator app and enter the code it shows for {domain}.",
  pickerLegend: "Choose how to continue",
  mfaLegend: "Choose how to verify it's you",
  accountLegend: "Choose an account",
  signInLegend: "Choose how to sign in",
  ssoLegend: "Or continue with",
  ssoButton: "Continue with {provider}",
  mfaTypes: {
    sms: "Text message",
    call: "Phone call",
    email: "Email",
    totp: "Authenticator app",
    push: "Notification on your device",
    password: "Password",
    switch: "Another way",
  },
  externalActionHeading: "Waiting for you",
  externalActionDefault: "Finish the step the site asked for on your other device. This page moves on by itself.",
  websiteErrorIntro: "{domain} says:",
  submitFailed: "That didn't go through. Try again.",
  successHeading: "You're signed in",
  successBody: "You're signed in to {domain}. You can close this page.",
  redirecting: "Taking you back…",
  failedHeading: "Sign-in didn't work",
  failedNext: "Ask whoever sent you this link for a new one to try again.",
  errorReasons: {
    credentials_invalid: "The site did not accept the details you entered.",
    bot_detected: "The site decided this sign-in looked automated and blocked it.",
    captcha_blocked: "The site asked for a CAPTCHA puzzle, which this page can't show.",
    unsupported_auth_method: "The site asked for a kind of sign-in this page can't do.",
    site_unreachable: "The site could not be reached.",
    login_form_not_found: "The site's sign-in form could not be found.",
    rate_limited: "The site has had too many sign-in attempts. Wait a while before trying again.",
    flow_expired: "The sign-in took too long and expired.",
    internal_error: "Something went wrong on our side.",
  } satisfies Record<FlowErrorCode, string>,
  unknownReason: "The sign-in could not be finished.",
  expiredHeading: "This sign-in expired",
  expiredBody: "It waited too long for an answer. Ask whoever sent you this link for a new one.",
  canceledHeading: "This sign-in was canceled",
  canceledBody: "Ask whoever sent you this link for a new one if you still want to sign in.",
  linkHeading: "Ask for a new link",
  linkBody: "This link has expired or was already used. Ask whoever sent it to you for a new link.",
  redirectRefused: "This page won't send you on to the address it was given: {reason}",
  redirectRefusedReasons: {
    scheme: "only http and https addresses are allowed.",
    origin: "that site is not on the list of allowed addresses.",
    invalid: "it is not a valid address.",
  },
};

export type Strings = typeof en;

const de: Strings = {
  title: "Anmelden",
  heading: "Bei {domain} anmelden",
  headingNoDomain: "Anmelden",
  opening: "Ihre Anmeldung wird geöffnet…",
  discovering: "Die Anmeldeseite von {domain} wird geöffnet…",
  working: "Anmeldung läuft…",
  reconnecting: "Die Verbindung wurde unterbrochen. Neuer Versuch…",
  submit: "Weiter",
  fieldsLegend: "Geben Sie Ihre Daten ein",
  fieldLabels: {
    identifier: "E-Mail oder Benutzername",
    password: "Passwort",
    code: "Bestätigungscode",
    totp_code: "Code aus Ihrer Authenticator-App",
    totp_secret: "Einrichtungsschlüssel des Authenticators",
    text: "Antwort",
  },
  codeHint: "Geben Sie den Code ein, den die Website Ihnen geschickt hat.",
  totpHint: "Öffnen Sie Ihre Authenticator-App und geben Sie den Code für {domain} ein.",
  pickerLegend: "Wählen Sie, wie es weitergeht",
  mfaLegend: "Wählen Sie, wie Sie sich bestätigen",
  accountLegend: "Wählen Sie ein Konto",
  signInLegend: "Wählen Sie, wie Sie sich anmelden",
  ssoLegend: "Oder weiter mit",
  ssoButton: "Weiter mit {provider}",
  mfaTypes: {
    sms: "SMS",
    call: "Anruf",
    email: "E-Mail",
    totp: "Authenticator-App",
    push: "Mitteilung auf Ihrem Gerät",
    password: "Passwort",
    switch: "Anderer Weg",
  },
  externalActionHeading: "Wir warten auf Sie",
  externalActionDefault: "Erledigen Sie den Schritt, um den die Website bittet, auf Ihrem anderen Gerät. Diese Seite geht von selbst weiter.",
  websiteErrorIntro: "{domain} meldet:",
  submitFailed: "Das hat nicht geklappt. Versuchen Sie es noch einmal.",
  successHeading: "Sie sind angemeldet",
  successBody: "Sie sind bei {domain} angemeldet. Sie können diese Seite schließen.",
  redirecting: "Sie werden zurückgeleitet…",
  failedHeading: "Die Anmeldung hat nicht geklappt",
  failedNext: "Bitten Sie den Absender dieses Links um einen neuen, um es noch einmal zu versuchen.",
  errorReasons: {
    credentials_invalid: "Die Website hat Ihre Angaben nicht angenommen.",
    bot_detected: "Die Website hielt diese Anmeldung für automatisiert und hat sie blockiert.",
    captcha_blocked: "Die Website verlangt ein CAPTCHA, das diese Seite nicht anzeigen kann.",
    unsupported_auth_method: "Die Website verlangt eine Anmeldeart, die diese Seite nicht beherrscht.",
    site_unreachable: "Die Website war nicht erreichbar.",
    login_form_not_found: "Das Anmeldeformular der Website wurde nicht gefunden.",
    rate_limited: "Die Website hatte zu viele Anmeldeversuche. Warten Sie eine Weile, bevor Sie es erneut versuchen.",
    flow_expired: "Die Anmeldung hat zu lange gedauert und ist abgelaufen.",
    internal_error: "Bei uns ist etwas schiefgegangen.",
  },
  unknownReason: "Die Anmeldung konnte nicht abgeschlossen werden.",
  expiredHeading: "Diese Anmeldung ist abgelaufen",
  expiredBody: "Sie hat zu lange auf eine Antwort gewartet. Bitten Sie den Absender dieses Links um einen neuen.",
  canceledHeading: "Diese Anmeldung wurde abgebrochen",
  canceledBody: "Bitten Sie den Absender dieses Links um einen neuen, wenn Sie sich noch anmelden möchten.",
  linkHeading: "Fordern Sie einen neuen Link an",
  linkBody: "Dieser Link ist abgelaufen oder wurde schon benutzt. Bitten Sie den Absender um einen neuen Link.",
  redirectRefused: "Diese Seite leitet Sie nicht an die angegebene Adresse weiter: {reason}",
  redirectRefusedReasons: {
    scheme: "Nur http- und https-Adressen sind erlaubt.",
    origin: "Diese Website steht nicht auf der Liste der erlaubten Adressen.",
    invalid: "Das ist keine gültige Adresse.",
  },
};

const es: Strings = {
  title: "Iniciar sesión",
  heading: "Inicia sesión en {domain}",
  headingNoDomain: "Iniciar sesión",
  opening: "Abriendo tu inicio de sesión…",
  discovering: "Abriendo la página de inicio de sesión de {domain}…",
  working: "Iniciando sesión…",
  reconnecting: "Se perdió la conexión. Reconectando…",
  submit: "Continuar",
  fieldsLegend: "Introduce tus datos",
  fieldLabels: {
    identifier: "Correo electrónico o usuario",
    password: "Contraseña",
    code: "Código de verificación",
    totp_code: "Código de tu app de autenticación",
    totp_secret: "Clave de configuración del autenticador",
    text: "Respuesta",
  },
  codeHint: "Introduce el código que te envió el sitio.",
  totpHint: "Abre tu app de autenticación e introduce el código que muestra para {domain}.",
  pickerLegend: "Elige cómo continuar",
  mfaLegend: "Elige cómo verificar que eres tú",
  accountLegend: "Elige una cuenta",
  signInLegend: "Elige cómo iniciar sesión",
  ssoLegend: "O continúa con",
  ssoButton: "Continuar con {provider}",
  mfaTypes: {
    sms: "Mensaje de texto",
    call: "Llamada",
    email: "Correo electrónico",
    totp: "App de autenticación",
    push: "Notificación en tu dispositivo",
    password: "Contraseña",
    switch: "Otra forma",
  },
  externalActionHeading: "Esperándote",
  externalActionDefault: "Completa en tu otro dispositivo el paso que pidió el sitio. Esta página avanzará sola.",
  websiteErrorIntro: "{domain} dice:",
  submitFailed: "No se pudo enviar. Inténtalo de nuevo.",
  successHeading: "Has iniciado sesión",
  successBody: "Has iniciado sesión en {domain}. Puedes cerrar esta página.",
  redirecting: "Te estamos llevando de vuelta…",
  failedHeading: "No se pudo iniciar sesión",
  failedNext: "Pide a quien te envió este enlace uno nuevo para volver a intentarlo.",
  errorReasons: {
    credentials_invalid: "El sitio no aceptó los datos que introdujiste.",
    bot_detected: "El sitio consideró que este inicio de sesión era automático y lo bloqueó.",
    captcha_blocked: "El sitio pidió un CAPTCHA que esta página no puede mostrar.",
    unsupported_auth_method: "El sitio pidió un tipo de inicio de sesión que esta página no admite.",
    site_unreachable: "No se pudo acceder al sitio.",
    login_form_not_found: "No se encontró el formulario de inicio de sesión del sitio.",
    rate_limited: "El sitio ha recibido demasiados intentos. Espera un rato antes de volver a intentarlo.",
    flow_expired: "El inicio de sesión tardó demasiado y caducó.",
    internal_error: "Algo salió mal por nuestra parte.",
  },
  unknownReason: "No se pudo completar el inicio de sesión.",
  expiredHeading: "Este inicio de sesión caducó",
  expiredBody: "Esperó demasiado una respuesta. Pide a quien te envió este enlace uno nuevo.",
  canceledHeading: "Este inicio de sesión se canceló",
  canceledBody: "Pide a quien te envió este enlace uno nuevo si aún quieres iniciar sesión.",
  linkHeading: "Pide un enlace nuevo",
  linkBody: "Este enlace caducó o ya se usó. Pide a quien te lo envió un enlace nuevo.",
  redirectRefused: "Esta página no te enviará a la dirección indicada: {reason}",
  redirectRefusedReasons: {
    scheme: "solo se permiten direcciones http y https.",
    origin: "ese sitio no está en la lista de direcciones permitidas.",
    invalid: "no es una dirección válida.",
  },
};

const fr: Strings = {
  title: "Connexion",
  heading: "Connexion à {domain}",
  headingNoDomain: "Connexion",
  opening: "Ouverture de votre connexion…",
  discovering: "Ouverture de la page de connexion de {domain}…",
  working: "Connexion en cours…",
  reconnecting: "La connexion a été interrompue. Nouvelle tentative…",
  submit: "Continuer",
  fieldsLegend: "Saisissez vos informations",
  fieldLabels: {
    identifier: "E-mail ou nom d'utilisateur",
    password: "Mot de passe",
    code: "Code de vérification",
    totp_code: "Code de votre application d'authentification",
    totp_secret: "Clé de configuration de l'authentificateur",
    text: "Réponse",
  },
  codeHint: "Saisissez le code que le site vous a envoyé.",
  totpHint: "Ouvrez votre application d'authentification et saisissez le code affiché pour {domain}.",
  pickerLegend: "Choisissez comment continuer",
  mfaLegend: "Choisissez comment confirmer votre identité",
  accountLegend: "Choisissez un compte",
  signInLegend: "Choisissez comment vous connecter",
  ssoLegend: "Ou continuer avec",
  ssoButton: "Continuer avec {provider}",
  mfaTypes: {
    sms: "SMS",
    call: "Appel téléphonique",
    email: "E-mail",
    totp: "Application d'authentification",
    push: "Notification sur votre appareil",
    password: "Mot de passe",
    switch: "Autre méthode",
  },
  externalActionHeading: "En attente de votre action",
  externalActionDefault: "Terminez sur votre autre appareil l'étape demandée par le site. Cette page avancera d'elle-même.",
  websiteErrorIntro: "{domain} indique :",
  submitFailed: "L'envoi a échoué. Réessayez.",
  successHeading: "Vous êtes connecté",
  successBody: "Vous êtes connecté à {domain}. Vous pouvez fermer cette page.",
  redirecting: "Redirection en cours…",
  failedHeading: "La connexion a échoué",
  failedNext: "Demandez un nouveau lien à la personne qui vous a envoyé celui-ci pour réessayer.",
  errorReasons: {
    credentials_invalid: "Le site n'a pas accepté les informations saisies.",
    bot_detected: "Le site a jugé cette connexion automatisée et l'a bloquée.",
    captcha_blocked: "Le site a demandé un CAPTCHA que cette page ne peut pas afficher.",
    unsupported_auth_method: "Le site a demandé un mode de connexion que cette page ne gère pas.",
    site_unreachable: "Le site est injoignable.",
    login_form_not_found: "Le formulaire de connexion du site est introuvable.",
    rate_limited: "Le site a reçu trop de tentatives de connexion. Patientez avant de réessayer.",
    flow_expired: "La connexion a pris trop de temps et a expiré.",
    internal_error: "Un problème est survenu de notre côté.",
  },
  unknownReason: "La connexion n'a pas pu aboutir.",
  expiredHeading: "Cette connexion a expiré",
  expiredBody: "Elle a attendu une réponse trop longtemps. Demandez un nouveau lien à la personne qui vous l'a envoyé.",
  canceledHeading: "Cette connexion a été annulée",
  canceledBody: "Demandez un nouveau lien à la personne qui vous l'a envoyé si vous voulez toujours vous connecter.",
  linkHeading: "Demandez un nouveau lien",
  linkBody: "Ce lien a expiré ou a déjà été utilisé. Demandez un nouveau lien à la personne qui vous l'a envoyé.",
  redirectRefused: "Cette page ne vous enverra pas vers l'adresse indiquée : {reason}",
  redirectRefusedReasons: {
    scheme: "seules les adresses http et https sont autorisées.",
    origin: "ce site ne figure pas dans la liste des adresses autorisées.",
    invalid: "ce n'est pas une adresse valide.",
  },
};

export const hostedLoginStrings: Record<string, Strings> = { en, de, es, fr };

const qvalue = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The page's language for an `Accept-Language` header: the highest-weighted tag the table has,
 * matched whole (`de`) or by its primary subtag (`de-AT` -> `de`); English when none matches.
 */
export function chooseLanguage(acceptLanguage: string | undefined): string {
  const ranked = (acceptLanguage ?? "")
    .split(",")
    .map((entry, order) => {
      const [tag = "", ...params] = entry.trim().split(";");
      const weight = params.map((param) => param.trim()).find((param) => /^q=/i.test(param))?.slice(2);
      // A weight that is no qvalue (RFC 9110: 0 to 1, three decimals at most) leaves the entry out rather than guessing it.
      const q = weight === undefined ? 1 : qvalue.test(weight) ? Number(weight) : Number.NaN;
      return { tag: tag.trim().toLowerCase(), q, order };
    })
    .filter((entry) => entry.tag !== "" && Number.isFinite(entry.q) && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
  for (const { tag } of ranked) {
    const primary = tag.split("-")[0] ?? "";
    if (Object.hasOwn(hostedLoginStrings, tag)) return tag;
    if (Object.hasOwn(hostedLoginStrings, primary)) return primary;
  }
  return "en";
}
