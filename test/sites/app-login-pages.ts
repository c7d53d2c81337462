import { escapeHtml } from "./site-html.ts";

/**
 * Login pages written the way widely deployed web applications render them after a rejected login,
 * trimmed to what matters around the message: chrome, hidden templates, `<noscript>` warnings and
 * notices included, as the real pages have them. Written from the applications' templates, not
 * copied from any one install; `message` is the site's text for the failure, absent on a first visit.
 */

export interface AppPageOptions {
  action: string;
  message?: string;
  /** What the person typed as their user name, which some sites repeat in the message or the field. */
  username?: string;
}

const text = (value: string | undefined) => escapeHtml(value ?? "");

/** WordPress up to 5.x: `#login_error` with no class, "ERROR" in a `<strong>`, the lost-password link inside. */
export function wordpressClassic({ action, message, username }: AppPageOptions): string {
  return `<!DOCTYPE html>
<html lang="en-US">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<title>Log In &lsaquo; My Blog &#8212; WordPress</title>
<link rel='stylesheet' id='login-css' href='/wp-admin/css/login.min.css' type='text/css' media='all' />
<script type="text/javascript">document.documentElement.className = document.documentElement.className.replace('no-js','js');</script>
</head>
<body class="login login-action-login wp-core-ui locale-en-us">
<div id="login">
	<h1><a href="https://wordpress.org/">Powered by WordPress</a></h1>
${message ? `<div id="login_error">	<strong>ERROR</strong>: ${text(message)} <a href="/wp-login.php?action=lostpassword">Lost your password?</a><br />\n</div>\n` : ""}
<form name="loginform" id="loginform" action="${text(action)}" method="post">
	<p>
		<label for="user_login">Username or Email Address<br />
		<input type="text" name="log" id="user_login" class="input" value="${text(username)}" size="20" autocapitalize="off" /></label>
	</p>
	<div class="user-pass-wrap">
		<label for="user_pass">Password</label>
		<div class="wp-pwd">
			<input type="password" name="pwd" id="user_pass" class="input password-input" value="" size="20" />
			<button type="button" class="button button-secondary wp-hide-pw hide-if-no-js" data-toggle="0" aria-label="Show password">
				<span class="dashicons dashicons-visibility" aria-hidden="true"></span>
			</button>
		</div>
	</div>
	<p class="forgetmenot"><input name="rememberme" type="checkbox" id="rememberme" value="forever"  /> <label for="rememberme">Remember Me</label></p>
	<p class="submit">
		<input type="submit" name="wp-submit" id="wp-submit" class="button button-primary button-large" value="Log In" />
		<input type="hidden" name="redirect_to" value="/wp-admin/" />
		<input type="hidden" name="testcookie" value="1" />
	</p>
</form>
<p id="nav"><a href="/wp-login.php?action=lostpassword">Lost your password?</a></p>
<script type="text/javascript">
function wp_attempt_focus(){
setTimeout( function(){ try{
d = document.getElementById('user_pass');
d.value = '';
d.focus();
d.select();
} catch(e){}
}, 200);
}
wp_attempt_focus();
if(typeof wpOnload=='function')wpOnload();
</script>
<p id="backtoblog"><a href="/">&larr; Back to My Blog</a></p>
</div>
<div class="clear"></div>
</body>
</html>`;
}

/** WordPress 6: `#login_error.notice.notice-error`, and the "logged out" notice a second message may sit beside. */
export function wordpressModern({ action, message, notice }: AppPageOptions & { notice?: string }): string {
  return `<!DOCTYPE html>
<html lang="en-US">
<head><meta charset="UTF-8"><title>Log In &lsaquo; My Blog &#8212; WordPress</title></head>
<body class="login no-js login-action-login wp-core-ui locale-en-us">
<script>document.body.className = document.body.className.replace('no-js','js');</script>
<h1 class="screen-reader-text">Log In</h1>
<div id="login">
<h1 role="presentation" class="wp-login-logo"><a href="https://wordpress.org/">Powered by WordPress</a></h1>
${notice ? `<div id="login-message" class="notice notice-info message"><p>${text(notice)}</p></div>` : ""}
${message ? `<div id="login_error" class="notice notice-error"><p><strong>Error:</strong> ${text(message)} <a href="/wp-login.php?action=lostpassword">Lost your password?</a></p></div>` : ""}
<form name="loginform" id="loginform" action="${text(action)}" method="post">
<p><label for="user_login">Username or Email Address</label>
<input type="text" name="log" id="user_login" class="input" value="" size="20" autocapitalize="off" autocomplete="username" required="required" /></p>
<div class="user-pass-wrap"><label for="user_pass">Password</label>
<div class="wp-pwd"><input type="password" name="pwd" id="user_pass" class="input password-input" value="" size="20" autocomplete="current-password" spellcheck="false" required="required" />
<button type="button" class="button button-secondary wp-hide-pw hide-if-no-js" data-toggle="0" aria-label="Show password"><span class="dashicons dashicons-visibility" aria-hidden="true"></span></button></div></div>
<p class="submit"><input type="submit" name="wp-submit" id="wp-submit" class="button button-primary button-large" value="Log In" /></p>
</form>
<p id="nav"><a class="wp-login-lost-password" href="/wp-login.php?action=lostpassword">Lost your password?</a></p>
</div>
<div class="language-switcher"><form id="language-switcher" method="get"><label for="language-switcher-locales"><span class="dashicons dashicons-translation" aria-hidden="true"></span><span class="screen-reader-text">Language</span></label>
<select name="wp_lang" id="language-switcher-locales"><option value="en_US" selected>English (United States)</option></select>
<input type="submit" class="button" value="Change"></form></div>
</body></html>`;
}

/** MediaWiki 1.40+: a Codex message box above the form (`cdx-message--error`, the text in `__content`). */
export function mediawikiCodex({ action, message, username }: AppPageOptions): string {
  return `<!DOCTYPE html>
<html class="client-nojs" lang="en" dir="ltr">
<head><meta charset="UTF-8"><title>Log in - MyWiki</title>
<script>(RLQ=window.RLQ||[]).push(function(){mw.config.set({"wgCanonicalSpecialPageName":"Userlogin"});});</script></head>
<body class="mediawiki ltr sitedir-ltr ns--1 page-Special_UserLogin skin-vector">
<div class="vector-header-container"><header class="vector-header mw-header"><nav class="vector-user-links" aria-label="Personal tools"><ul><li id="pt-createaccount"><a href="/index.php?title=Special:CreateAccount">Create account</a></li><li id="pt-login"><a href="/index.php?title=Special:UserLogin">Log in</a></li></ul></nav></header></div>
<main id="content" class="mw-body" role="main">
<h1 id="firstHeading" class="firstHeading mw-first-heading">Log in</h1>
<div id="bodyContent" class="vector-body">
<div id="mw-content-text" class="mw-body-content">
<div class="mw-ui-container"><div id="userloginprompt"></div>
<div id="userloginForm">
<form class="mw-htmlform mw-ui-vform mw-ui-container" action="${text(action)}" method="post" name="userlogin">
${message ? `<div class="cdx-message cdx-message--block cdx-message--error"><span class="cdx-message__icon"></span><div class="cdx-message__content">${text(message)}</div></div>` : ""}
<div class="mw-htmlform-field-HTMLTextField loginText mw-ui-vform-field"><label for="wpName1">Username</label>
<div class="mw-input"><input id="wpName1" name="wpName" size="20" class="loginText mw-ui-input" placeholder="Enter your username" tabindex="1" required="" autofocus="" autocomplete="username" value="${text(username)}"></div></div>
<div class="mw-htmlform-field-HTMLTextField loginPassword mw-ui-vform-field"><label for="wpPassword1">Password</label>
<div class="mw-input"><input id="wpPassword1" name="wpPassword" size="20" class="loginPassword mw-ui-input" placeholder="Enter your password" tabindex="2" required="" autocomplete="current-password" type="password"></div></div>
<div class="mw-htmlform-field-HTMLCheckField mw-ui-vform-field"><div class="mw-ui-checkbox"><input name="wpRemember" type="checkbox" value="1" id="wpRemember" tabindex="3" class="mw-ui-checkbox-input"><label for="wpRemember">Keep me logged in (for up to 365 days)</label></div></div>
<div class="mw-htmlform-field-HTMLSubmitField mw-ui-vform-field"><button class="mw-htmlform-submit mw-ui-button mw-ui-primary mw-ui-progressive" id="wpLoginAttempt" tabindex="6" type="submit" name="wploginattempt" value="Log in">Log in</button></div>
<input name="wpLoginToken" type="hidden" value="a1b2c3d4+\\"><input id="mw-input-authAction" name="authAction" type="hidden" value="login">
<div class="mw-form-related-link-container mw-form-related-link-container-help"><a href="https://www.mediawiki.org/wiki/Special:MyLanguage/Help:Logging_in">Help with logging in</a></div>
<div class="mw-form-related-link-container mw-userlogin-forgotten-password"><a href="/index.php?title=Special:PasswordReset">Forgot your password?</a></div>
</form></div></div></div></div></main>
<footer id="footer" class="mw-footer" role="contentinfo"><ul id="footer-places"><li id="footer-places-privacy"><a href="/index.php?title=MyWiki:Privacy_policy">Privacy policy</a></li></ul></footer>
</body></html>`;
}

/** MediaWiki before Codex: `.errorbox` above the form. */
export function mediawikiLegacy({ action, message }: AppPageOptions): string {
  return `<!DOCTYPE html><html lang="en"><head><title>Log in - MyWiki</title></head><body class="mediawiki">
<div id="content" class="mw-body" role="main"><h1 id="firstHeading">Log in</h1>
<div id="mw-content-text"><div id="userloginForm">
<form name="userlogin" class="mw-ui-vform" method="post" action="${text(action)}">
${message ? `<div class="errorbox">${text(message)}</div>` : ""}
<div><label for="wpName1">Username</label><input class="loginText mw-ui-input" id="wpName1" tabindex="1" size="20" required="" name="wpName" placeholder="Enter your username"></div>
<div><label for="wpPassword1">Password</label><input class="loginPassword mw-ui-input" id="wpPassword1" tabindex="2" size="20" type="password" name="wpPassword" placeholder="Enter your password"></div>
<div><input id="wpLoginAttempt" tabindex="6" class="mw-ui-button mw-ui-big mw-ui-block mw-ui-constructive" type="submit" value="Log in" name="wpLoginattempt"></div>
</form></div></div></div></body></html>`;
}

/** phpBB 3 (prosilver): `<div class="error">` inside the form's first fieldset, with a link to the board admin in it. */
export function phpbb({ action, message, username }: AppPageOptions): string {
  return `<!DOCTYPE html>
<html dir="ltr" lang="en-gb">
<head><meta charset="utf-8" /><title>My Board - Login</title></head>
<body id="phpbb" class="nojs notouch section-ucp ltr ">
<div id="wrap" class="wrap">
	<a id="top" class="top-anchor" accesskey="t"></a>
	<div id="page-header">
		<div class="headerbar" role="banner">
			<div class="inner"><div id="site-description" class="site-description"><h1>My Board</h1><p>A short text to describe your forum</p>
			<p class="skiplink"><a href="#start_here">Skip to content</a></p></div></div>
		</div>
		<div class="navbar" role="navigation"><ul id="nav-main" class="nav-main linklist" role="menubar"><li><a href="./faq.php" rel="help" title="Frequently Asked Questions" role="menuitem">FAQ</a></li></ul></div>
	</div>
	<a id="start_here" class="anchor"></a>
	<div id="page-body" class="page-body" role="main">
<form action="${text(action)}" method="post" id="login" data-focus="username">
<div class="panel">
	<div class="inner">
	<div class="content">
		<h2 class="login-title">Login</h2>
		<fieldset class="fields1">
		${message ? `<div class="error">${text(message)} If you continue to experience problems please contact the <a href="./memberlist.php?mode=contactadmin">Board Administrator</a>.</div>` : ""}
		<dl>
			<dt><label for="username">Username:</label></dt>
			<dd><input type="text" tabindex="1" name="username" id="username" size="25" value="${text(username)}" class="inputbox autowidth" /></dd>
		</dl>
		<dl>
			<dt><label for="password">Password:</label></dt>
			<dd><input type="password" tabindex="2" id="password" name="password" size="25" class="inputbox autowidth" autocomplete="off" /></dd>
			<dd><a href="./ucp.php?mode=sendpassword">I forgot my password</a></dd>
		</dl>
		<dl>
			<dd><label for="autologin"><input type="checkbox" name="autologin" id="autologin" tabindex="4" /> Remember me</label></dd>
			<dd><label for="viewonline"><input type="checkbox" name="viewonline" id="viewonline" tabindex="5" /> Hide my online status this session</label></dd>
		</dl>
		<input type="hidden" name="sid" value="5f6c7d" />
		<input type="hidden" name="redirect" value="./ucp.php?mode=login" />
		<dl><dt>&nbsp;</dt><dd><input type="submit" name="login" tabindex="6" value="Login" class="button1" /></dd></dl>
		</fieldset>
	</div>
	</div>
</div>
</form>
	</div>
	<div id="page-footer" class="page-footer" role="contentinfo"><div class="copyright">Powered by <a href="https://www.phpbb.com/">phpBB</a>&reg; Forum Software &copy; phpBB Limited</div></div>
</div>
</body>
</html>`;
}

/** Django admin: `.errornote` for the form's error, `.errorlist` per field, `messagelist` for notices. */
export function djangoAdmin({ action, message, fieldError, notice }: AppPageOptions & { fieldError?: string; notice?: string }): string {
  return `<!DOCTYPE html>
<html lang="en-us" dir="ltr">
<head><title>Log in | Django site admin</title><link rel="stylesheet" href="/static/admin/css/base.css"></head>
<body class=" login" data-admin-utc-offset="0">
<a href="#content-start" class="skip-to-content-link">Skip to main content</a>
<div id="container">
    <header id="header"><div id="site-name"><a href="/admin/">Django administration</a></div></header>
    <main id="main" class="main">
      <div id="content-start" class="content" tabindex="-1">
        ${notice ? `<ul class="messagelist"><li class="info">${text(notice)}</li></ul>` : ""}
        <div id="content" class="colM">
${message ? `<p class="errornote">\n${text(message)}\n</p>` : ""}
<div id="content-main">
<form action="${text(action)}" method="post" id="login-form"><input type="hidden" name="csrfmiddlewaretoken" value="k3Jd9">
  <div class="form-row">
    <label class="required" for="id_username">Username:</label> <input type="text" name="username" autofocus autocapitalize="none" autocomplete="username" maxlength="150" required id="id_username">
  </div>
  <div class="form-row">
    ${fieldError ? `<ul class="errorlist"><li>${text(fieldError)}</li></ul>` : ""}
    <label class="required" for="id_password">Password:</label> <input type="password" name="password" autocomplete="current-password" required id="id_password">
    <input type="hidden" name="next" value="/admin/">
  </div>
  <div class="submit-row"><input type="submit" value="Log in"></div>
</form>
</div>
        </div>
      </div>
    </main>
    <footer id="footer"></footer>
</div>
</body>
</html>`;
}

/** A Rails app with Devise's generated layout: `<p class="notice">` and `<p class="alert">` flashes, both always present. */
export function railsDevise({ action, message, notice }: AppPageOptions & { notice?: string }): string {
  return `<!DOCTYPE html>
<html>
  <head><title>Shop</title><meta name="csrf-token" content="q1w2e3" /></head>
  <body>
    <p class="notice">${text(notice)}</p>
    <p class="alert">${text(message)}</p>
<h2>Log in</h2>
<form class="new_user" id="new_user" action="${text(action)}" accept-charset="UTF-8" method="post"><input type="hidden" name="authenticity_token" value="q1w2e3" autocomplete="off" />
  <div class="field"><label for="user_email">Email</label><br /><input autofocus="autofocus" autocomplete="email" type="email" value="" name="user[email]" id="user_email" /></div>
  <div class="field"><label for="user_password">Password</label><br /><input autocomplete="current-password" type="password" name="user[password]" id="user_password" /></div>
  <div class="field"><input name="user[remember_me]" type="hidden" value="0" autocomplete="off" /><input type="checkbox" value="1" name="user[remember_me]" id="user_remember_me" /><label for="user_remember_me">Remember me</label></div>
  <div class="actions"><input type="submit" name="commit" value="Log in" data-disable-with="Log in" /></div>
</form>
  <a href="/users/sign_up">Sign up</a><br />
  <a href="/users/password/new">Forgot your password?</a><br />
  </body>
</html>`;
}

/** Keycloak (keycloak.v2 theme, PatternFly 5): an inline danger alert, and the same text under the field the input points to. */
export function keycloak({ action, message, username }: AppPageOptions): string {
  return `<!DOCTYPE html>
<html class="layout-pf-v5" lang="en">
<head><meta charset="utf-8"><title>Sign in to myrealm</title></head>
<body id="keycloak-bg" data-page-id="login-login">
<div class="pf-v5-c-login">
  <div class="pf-v5-c-login__container">
    <header id="kc-header" class="pf-v5-c-login__header"><div id="kc-header-wrapper" class="pf-v5-c-brand">myrealm</div></header>
    <main class="pf-v5-c-login__main">
      <div class="pf-v5-c-login__main-header"><h1 class="pf-v5-c-title pf-m-3xl" id="kc-page-title">Sign in to your account</h1></div>
      <div class="pf-v5-c-login__main-body">
${message ? `        <div class="pf-v5-c-alert pf-m-inline pf-m-danger pf-v5-u-mb-md" aria-live="polite">
          <div class="pf-v5-c-alert__icon"><svg class="pf-v5-svg" viewBox="0 0 512 512" fill="currentColor" aria-hidden="true" role="img" width="1em" height="1em"><title>Error</title><path d="M504 256"></path></svg></div>
          <span class="pf-v5-screen-reader">Danger alert:</span>
          <h4 class="pf-v5-c-alert__title kc-feedback-text">${text(message)}</h4>
        </div>` : ""}
        <form id="kc-form-login" class="pf-v5-c-form pf-m-horizontal" onsubmit="login.disabled = true; return true;" action="${text(action)}" method="post" novalidate="novalidate">
          <div class="pf-v5-c-form__group">
            <div class="pf-v5-c-form__label"><label for="username" class="pf-v5-c-form__label"><span class="pf-v5-c-form__label-text">Username or email</span></label></div>
            <span class="pf-v5-c-form-control ${message ? "pf-m-error" : ""}"><input id="username" name="username" value="${text(username)}" type="text" autocomplete="username" autofocus${message ? ` aria-invalid="true" aria-describedby="input-error"` : ""}></span>
${message ? `            <div id="input-error-container-username"><span id="input-error" class="pf-v5-c-helper-text__item-text pf-m-error kc-feedback-text" aria-live="polite">${text(message)}</span></div>` : ""}
          </div>
          <div class="pf-v5-c-form__group">
            <div class="pf-v5-c-form__label"><label for="password" class="pf-v5-c-form__label"><span class="pf-v5-c-form__label-text">Password</span></label></div>
            <div class="pf-v5-c-input-group"><span class="pf-v5-c-form-control"><input id="password" name="password" value="" type="password" autocomplete="current-password"${message ? ` aria-invalid="true" aria-describedby="input-error"` : ""}></span>
            <button class="pf-v5-c-button pf-m-control" type="button" aria-label="Show password" aria-controls="password" data-icon-show="fa-eye fas"><i class="fa-eye fas" aria-hidden="true"></i></button></div>
            <div class="pf-v5-c-form__helper-text" aria-live="polite"><div class="pf-v5-c-helper-text"><div class="pf-v5-c-helper-text__item"><span class="kc-login-tooltip-text"><a href="/realms/myrealm/login-actions/reset-credentials">Forgot Password?</a></span></div></div></div>
          </div>
          <input type="hidden" id="id-hidden-input" name="credentialId"/>
          <div class="pf-v5-c-form__group pf-m-action"><button class="pf-v5-c-button pf-m-primary pf-m-block" name="login" id="kc-login" type="submit">Sign In</button></div>
        </form>
      </div>
      <div class="pf-v5-c-login__main-footer"></div>
    </main>
  </div>
</div>
</body>
</html>`;
}

/** GitLab (devise layout): a `.flash-container` above the form holding `.flash-alert` with a dismiss button. */
export function gitlab({ action, message }: AppPageOptions): string {
  return `<!DOCTYPE html>
<html class="devise-layout-html" lang="en">
<head><meta charset="utf-8"><title>Sign in · GitLab</title></head>
<body class="gl-h-full login-page navless" data-page="sessions:new">
<div class="gl-h-full gl-flex gl-flex-wrap">
<header class="header-logged-out" data-testid="navbar"><div class="container"><nav aria-label="Explore GitLab"><a class="header-logged-out-logo" href="/" title="Homepage">GitLab</a></nav></div></header>
<div class="container gl-w-full gl-grow gl-self-center">
<div class="content">
<div class="flash-container flash-container-page sticky" data-testid="flash-container">
${message ? `<div class="flash-alert" data-testid="alert-danger">
<div class="flash-text">
${text(message)}
</div>
<div class="close-icon-wrapper js-close-icon" role="button" tabindex="0" aria-label="Dismiss">
<svg class="s16 close-icon" data-testid="close-icon" aria-hidden="true"><use href="/assets/icons.svg#close"></use></svg>
</div>
</div>` : ""}
</div>
<div class="gl-my-5 gl-flex gl-flex-col gl-items-center"><h1 class="gl-mb-5 gl-text-size-h2">Sign in to GitLab</h1></div>
<div class="gl-w-full sm:gl-w-1/2">
<form class="gl-show-field-errors js-arkose-labs-form" aria-live="assertive" data-testid="sign-in-form" action="${text(action)}" accept-charset="UTF-8" method="post"><input type="hidden" name="authenticity_token" value="t0k3n" autocomplete="off" />
<div class="form-group"><label for="user_login">Username or primary email</label>
<input class="form-control gl-form-input js-username-field" autocomplete="username" autofocus="autofocus" autocapitalize="off" autocorrect="off" required="required" title="This field is required." data-testid="username-field" type="text" name="user[login]" id="user_login" /></div>
<div class="form-group"><label for="user_password">Password</label>
<input class="form-control gl-form-input js-password" data-id="user_password" data-required="true" data-testid="password-field" autocomplete="current-password" type="password" name="user[password]" id="user_password" /></div>
<div class="form-group form-check gl-mt-3 gl-mb-3 flex"><input name="user[remember_me]" type="hidden" value="0" autocomplete="off" /><input class="form-check-input" type="checkbox" value="1" name="user[remember_me]" id="user_remember_me" /><label class="form-check-label" for="user_remember_me">Remember me</label>
<a class="gl-ml-auto" href="/users/password/new">Forgot your password?</a></div>
<button class="btn gl-button btn-confirm btn-md" data-testid="sign-in-button" type="submit"><span class="gl-button-text">Sign in</span></button>
</form>
</div></div></div>
<footer class="footer-container"><div class="container"><a href="/explore">Explore</a><a href="/help">Help</a><a href="https://about.gitlab.com">About GitLab</a></div></footer>
</div>
</body>
</html>`;
}

/** Nextcloud's server-rendered login (before the Vue one): `<p class="warning wrongPasswordMsg">`, other warnings hidden until needed. */
export function nextcloud({ action, message, username }: AppPageOptions): string {
  return `<!DOCTYPE html>
<html class="ng-csp" data-placeholder-focus="false" lang="en" data-locale="en">
<head data-requesttoken="abc"><meta charset="utf-8"><title>Nextcloud</title></head>
<body id="body-login">
<noscript><div id="nojavascript"><div>This application requires JavaScript for correct operation. Please <a href="https://www.enable-javascript.com/" target="_blank" rel="noreferrer noopener">enable JavaScript</a> and reload the page.</div></div></noscript>
<div class="wrapper"><div class="v-align">
<header role="banner"><div id="header"><div class="logo"><h1 class="hidden-visually">Nextcloud</h1></div></div></header>
<form method="post" name="login" action="${text(action)}">
	<fieldset>
		<div id="message" class="hidden">
			<img class="float-spinner" alt="" src="/core/img/loading-dark.gif">
			<span id="messageText"></span>
			<div style="clear: both;"></div>
		</div>
		<p class="grouptop">
			<input type="text" name="user" id="user" placeholder="Username or email" aria-label="Username or email" value="${text(username)}" autofocus autocomplete="on" autocapitalize="none" autocorrect="off" required>
			<label for="user" class="infield">Username or email</label>
		</p>
		<p class="groupbottom">
			<input type="password" name="password" id="password" value="" placeholder="Password" aria-label="Password" autocomplete="on" autocapitalize="off" autocorrect="none" required>
			<label for="password" class="infield">Password</label>
		</p>
		${message ? `<p class="warning wrongPasswordMsg">${text(message)}</p>` : ""}
		<p class="warning throttledMsg hidden">We have detected multiple invalid login attempts from your IP. Therefore your next login is throttled up to 30 seconds.</p>
		<div id="submit-wrapper"><input type="submit" id="submit-form" class="login primary" title="" value="Log in" /></div>
		<div class="login-additional"><div class="remember-login-container"><input type="checkbox" name="remember_login" value="1" id="remember_login" class="checkbox checkbox--white"><label for="remember_login">Stay logged in</label></div></div>
		<input type="hidden" name="timezone_offset" id="timezone_offset"/>
		<input type="hidden" name="requesttoken" value="abc">
	</fieldset>
</form>
<a id="lost-password" class="warning" href="/lostpassword" style="display:none">Forgot password?</a>
</div></div>
<footer role="contentinfo"><p class="info"><a href="https://nextcloud.com" target="_blank" rel="noreferrer noopener" class="entity-name">Nextcloud</a> – a safe home for all your data</p></footer>
</body>
</html>`;
}

/** A Bootstrap 5 form with server-side validation: `.is-invalid` on the input, the text in `.invalid-feedback`; a hidden alert template for script. */
export function bootstrapFeedback({ action, message, username }: AppPageOptions): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · Acme Portal</title></head>
<body class="d-flex align-items-center py-4 bg-body-tertiary">
<div id="cookie-banner" class="alert alert-warning fixed-bottom" role="alert">We use cookies to improve your experience. Some features may fail without them. <button type="button" class="btn btn-sm btn-primary">Accept</button></div>
<main class="form-signin w-100 m-auto">
  <div class="alert alert-danger d-none" id="js-error" role="alert">Please fill in all fields.</div>
  <form method="post" action="${text(action)}" class="needs-validation" novalidate>
    <h1 class="h3 mb-3 fw-normal">Please sign in</h1>
    <div class="form-floating">
      <input type="email" class="form-control" id="floatingInput" name="email" placeholder="name@example.com" value="${text(username)}">
      <label for="floatingInput">Email address</label>
    </div>
    <div class="form-floating">
      <input type="password" class="form-control${message ? " is-invalid" : ""}" id="floatingPassword" name="password" placeholder="Password">
      <label for="floatingPassword">Password</label>
      ${message ? `<div class="invalid-feedback">${text(message)}</div>` : ""}
    </div>
    <div class="form-text" id="passwordHelp">Passwords are case-sensitive.</div>
    <button class="btn btn-primary w-100 py-2" type="submit">Sign in</button>
  </form>
</main>
</body></html>`;
}

/** Bootstrap 3: `.has-error` on the group, the message in its `.help-block`, next to a `.help-block` that is only help. */
export function bootstrap3HasError({ action, message }: AppPageOptions): string {
  return `<!DOCTYPE html><html><head><title>Login</title></head><body>
<div class="container"><div class="row"><div class="col-md-4 col-md-offset-4"><div class="panel panel-default"><div class="panel-heading"><h3 class="panel-title">Please sign in</h3></div>
<div class="panel-body"><form role="form" method="post" action="${text(action)}">
<div class="form-group"><label for="username" class="control-label">Username</label><input class="form-control" id="username" name="username" type="text" autofocus><span class="help-block">Your staff ID, e.g. jsmith</span></div>
<div class="form-group${message ? " has-error" : ""}"><label for="password" class="control-label">Password</label><input class="form-control" id="password" name="password" type="password" value="" aria-describedby="passwordHelp">${message ? `<span id="passwordHelp" class="help-block">${text(message)}</span>` : ""}</div>
<button type="submit" class="btn btn-lg btn-success btn-block">Login</button>
</form></div></div></div></div></div></body></html>`;
}

/** A single-page-style login whose server-rendered failure lands in an `aria-live` status region. */
export function ariaLiveRegion({ action, message }: AppPageOptions): string {
  return `<!DOCTYPE html><html lang="en"><head><title>Sign in - Timesheets</title></head><body>
<nav class="topbar"><a href="/">Timesheets</a> <span class="badge">Status: degraded, some exports failed</span></nav>
<div class="card">
<h2>Sign in</h2>
<div id="login-status" aria-live="assertive">${text(message)}</div>
<form method="post" action="${text(action)}">
<label>User <input name="user" autocomplete="username"></label>
<label>Password <input name="pass" type="password" autocomplete="current-password"></label>
<button>Sign in</button>
</form></div></body></html>`;
}

/** An old admin console that says so only in the title: the body is the same form again. */
export function titleOnly({ action, message }: AppPageOptions): string {
  return `<html><head><title>${text(message ?? "Administrator Login")}</title></head>
<body bgcolor="#ffffff"><center><table border="0" cellpadding="4"><tr><td><b>Administrator Login</b></td></tr>
<tr><td><form method="POST" action="${text(action)}">
User: <input type="text" name="login"><br>
Password: <input type="password" name="passwd"><br>
<input type="submit" value="Login"></form></td></tr></table></center></body></html>`;
}

/** An appliance UI that renders an empty message element and fills it from an inline script the server writes. */
export function inlineScriptMessage({ action, message }: AppPageOptions): string {
  return `<!DOCTYPE html><html><head><title>Router Login</title>
<script type="text/javascript">
function validate() {
  if (document.getElementById('pwd').value == '') {
    document.getElementById('msg').innerHTML = 'Please enter the password';
    return false;
  }
  return true;
}
</script></head>
<body onload="document.forms[0].pwd.focus()">
<div class="logo">Router Admin</div>
<form method="post" action="${text(action)}" onsubmit="return validate()">
<table><tr><td>Username</td><td><input type="text" name="user" value="admin"></td></tr>
<tr><td>Password</td><td><input type="password" name="pwd" id="pwd"></td></tr>
<tr><td colspan="2"><span id="msg" style="color:red"></span></td></tr>
<tr><td colspan="2"><input type="submit" value="Login"></td></tr></table>
</form>
${message ? `<script type="text/javascript">\nwindow.onload = function () {\n  document.getElementById('msg').innerHTML = '<b>${message.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}</b>';\n};\n</script>` : ""}
</body></html>`;
}

/** phpMyAdmin-like: a `<noscript>` warning styled as a danger alert comes first in the page, the real error after it. */
export function noscriptFirst({ action, message }: AppPageOptions): string {
  return `<!DOCTYPE HTML>
<html lang="en" dir="ltr">
<head><meta charset="utf-8"><title>phpMyAdmin</title></head>
<body id="loginform">
<noscript><div class="alert alert-danger" role="alert"><img src="themes/dot.gif" title="" alt="" class="icon ic_s_error"> Javascript must be enabled past this point!</div></noscript>
<div class="hide" id="js-https-mismatch"><div class="alert alert-danger" role="alert"><img src="themes/dot.gif" title="" alt="" class="icon ic_s_error"> There is a mismatch between HTTPS indicated on the server and client.</div></div>
<div class="container">
<a href="./url.php?url=https%3A%2F%2Fwww.phpmyadmin.net%2F" target="_blank" rel="noopener noreferrer" class="logo"><img src="./themes/pmahomme/img/logo_right.png" id="imLogo" name="imLogo" alt="phpMyAdmin" border="0"></a>
<h1>Welcome to <bdo dir="ltr" lang="en">phpMyAdmin</bdo></h1>
${message ? `<div class="alert alert-danger" role="alert"><img src="themes/dot.gif" title="" alt="" class="icon ic_s_error"> ${text(message)}</div>` : ""}
<div class="card mb-4"><form method="post" id="login_form" action="${text(action)}" name="login_form" class="disableAjax hide js-show">
<div class="card-body">
<fieldset class="pma-fieldset"><legend>Log in</legend>
<div class="item"><label for="input_username">Username:</label><input type="text" name="pma_username" id="input_username" value="" size="24" class="textfield" autocomplete="username"></div>
<div class="item"><label for="input_password">Password:</label><input type="password" name="pma_password" id="input_password" value="" size="24" class="textfield" autocomplete="current-password"></div>
<input type="hidden" name="server" value="1"></fieldset></div>
<div class="card-footer"><input class="btn btn-primary" value="Go" type="submit" id="input_go"><input type="hidden" name="token" value="5e6f"></div>
</form></div>
</div>
</body>
</html>`;
}
