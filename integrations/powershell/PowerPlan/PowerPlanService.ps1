# Install-PowerPlanService and Uninstall-PowerPlanService: the powerplan Windows service from an
# unpacked Windows release, through its install.ps1 and `powerplan.exe service install|uninstall`
# (docs/WINDOWS-SERVICE.md). Dot-sourced by PowerPlan.psm1; keeps to Windows PowerShell 5.1 syntax.

function New-PowerPlanServiceError {
    # A terminating error of these two commands: PowerPlan.<code>, the category, the target.
    param([string]$Message, [string]$Code, [System.Management.Automation.ErrorCategory]$Category, [object]$Target)
    $exception = New-Object System.InvalidOperationException -ArgumentList $Message
    New-Object System.Management.Automation.ErrorRecord -ArgumentList $exception, "PowerPlan.$Code", $Category, $Target
}

function Install-PowerPlanService {
    <#
    .SYNOPSIS
        Installs and starts the powerplan Windows service from an unpacked release.
    .DESCRIPTION
        Runs the release's install.ps1: the release is copied to -Destination, and
        `powerplan.exe service install` gives the state directory %ProgramData%\powerplan its access
        control list, configures the service wrapper (all addresses with -TokenFile, else 127.0.0.1
        only), remembers the plan in force and registers and starts the service "powerplan".
        Needs an elevated session. Writes the service (Get-Service powerplan) when done.
    .PARAMETER Path
        The unpacked release folder (powerplan-<version>-win-x64), or the zip itself.
    .PARAMETER TokenFile
        A token file (powerplan.exe token create); with it the service listens on all addresses.
    .PARAMETER Destination
        Where to install. Default: $env:ProgramFiles\powerplan.
    .EXAMPLE
        Install-PowerPlanService -Path .\powerplan-0.1.0-win-x64.zip -TokenFile C:\ProgramData\powerplan\tokens.json
    #>
    [CmdletBinding(SupportsShouldProcess = $true, ConfirmImpact = 'High')]
    param(
        [Parameter(Mandatory = $true)][string]$Path,
        [string]$TokenFile,
        [string]$Destination = $(if ($env:ProgramFiles) { Join-Path $env:ProgramFiles 'powerplan' } else { $null })
    )
    if (-not (Test-Path -LiteralPath $Path)) {
        $PSCmdlet.ThrowTerminatingError((New-PowerPlanServiceError -Message "No release at '$Path': give the unpacked powerplan-<version>-win-x64 folder or its zip." `
                    -Code 'release_not_found' -Category ObjectNotFound -Target $Path))
    }
    $release = (Resolve-Path -LiteralPath $Path).Path
    if ($release -like '*.zip') {
        $unpacked = Join-Path ([System.IO.Path]::GetTempPath()) ([System.IO.Path]::GetFileNameWithoutExtension($release))
        if ($PSCmdlet.ShouldProcess($unpacked, "Unpack $release")) {
            Expand-Archive -LiteralPath $release -DestinationPath ([System.IO.Path]::GetTempPath()) -Force
        }
        $release = $unpacked
    }
    $install = Join-Path $release 'install.ps1'
    if (-not (Test-Path -LiteralPath $install)) {
        if ($WhatIfPreference) { return }
        $PSCmdlet.ThrowTerminatingError((New-PowerPlanServiceError -Message "'$release' is not a powerplan Windows release: it has no install.ps1." `
                    -Code 'release_not_found' -Category InvalidArgument -Target $release))
    }
    if (-not $Destination) {
        $PSCmdlet.ThrowTerminatingError((New-PowerPlanServiceError -Message 'No -Destination and no %ProgramFiles%: name the folder to install into.' `
                    -Code 'invalid_input' -Category InvalidArgument -Target $release))
    }
    if (-not $PSCmdlet.ShouldProcess([System.Environment]::MachineName, "Install the powerplan service from $release into $Destination and start it")) { return }
    $arguments = @{ Destination = $Destination }
    if ($TokenFile) { $arguments.TokenFile = $TokenFile }
    try {
        & $install @arguments -Confirm:$false
    } catch {
        $PSCmdlet.ThrowTerminatingError((New-PowerPlanServiceError -Message "Installing the powerplan service failed: $($_.Exception.Message)" `
                    -Code 'install_failed' -Category InvalidOperation -Target $release))
    }
    if (Get-Command Get-Service -ErrorAction SilentlyContinue) { Get-Service -Name powerplan }
}

function Uninstall-PowerPlanService {
    <#
    .SYNOPSIS
        Stops and removes the powerplan Windows service, setting back the plan it changed.
    .DESCRIPTION
        Runs `powerplan.exe service uninstall` of the installed release: the service stops (a
        comparison under way restores its plan), every hold is released, the plan in force at
        install is set back if another is active (each change audited), and the service is
        removed. The state directory %ProgramData%\powerplan (the audit trail) stays. Needs an
        elevated session.
    .PARAMETER Path
        The installed release. Default: $env:ProgramFiles\powerplan.
    .EXAMPLE
        Uninstall-PowerPlanService
    #>
    [CmdletBinding(SupportsShouldProcess = $true, ConfirmImpact = 'High')]
    param([string]$Path = $(if ($env:ProgramFiles) { Join-Path $env:ProgramFiles 'powerplan' } else { $null }))
    $exe = if ($Path) { Join-Path $Path 'powerplan.exe' } else { $null }
    if (-not $exe -or -not (Test-Path -LiteralPath $exe)) {
        $PSCmdlet.ThrowTerminatingError((New-PowerPlanServiceError -Message "No powerplan.exe in '$Path': give the folder powerplan was installed into with -Path." `
                    -Code 'release_not_found' -Category ObjectNotFound -Target $Path))
    }
    if (-not $PSCmdlet.ShouldProcess([System.Environment]::MachineName, 'Stop and remove the powerplan service, setting back the plan it changed')) { return }
    & $exe service uninstall
    if ($LASTEXITCODE -ne 0) {
        $PSCmdlet.ThrowTerminatingError((New-PowerPlanServiceError -Message "powerplan.exe service uninstall failed with exit code $LASTEXITCODE (its message is above)." `
                    -Code 'uninstall_failed' -Category InvalidOperation -Target $exe))
    }
}
