<#
.SYNOPSIS
    Installs powerplan from this unpacked release as a Windows service, and starts it.
.DESCRIPTION
    Copies the release to -Destination (default: C:\Program Files\powerplan), then runs
    `powerplan.exe service install` there: the state directory %ProgramData%\powerplan gets its
    access control list (SYSTEM and Administrators only), WinSW registers the service "powerplan"
    (LocalSystem, automatic delayed start, restart on failure) and starts it. Run from an elevated
    prompt:  .\install.ps1            (loopback only)
             .\install.ps1 -TokenFile C:\ProgramData\powerplan\tokens.json   (listens on the network)
    Remove it with:  & "$env:ProgramFiles\powerplan\powerplan.exe" service uninstall
.PARAMETER TokenFile
    A token file (powerplan token create). With it the service listens on all addresses.
.PARAMETER Destination
    Where to install. Default: $env:ProgramFiles\powerplan.
#>
#Requires -RunAsAdministrator
[CmdletBinding(SupportsShouldProcess)]
param(
    [string] $TokenFile,
    [string] $Destination = (Join-Path $env:ProgramFiles 'powerplan')
)
$ErrorActionPreference = 'Stop'
if (-not $PSCmdlet.ShouldProcess($Destination, 'Install and start the powerplan service')) { return }
if ((Resolve-Path $PSScriptRoot).Path -ne (New-Item -ItemType Directory -Force -Path $Destination).FullName) {
    Copy-Item -Path (Join-Path $PSScriptRoot '*') -Destination $Destination -Recurse -Force
}
$arguments = @('service', 'install')
if ($TokenFile) { $arguments += @('--token-file', $TokenFile) }
& (Join-Path $Destination 'powerplan.exe') @arguments
if ($LASTEXITCODE -ne 0) {
    throw "powerplan.exe service install failed with exit code $LASTEXITCODE (its message is above)."
}
