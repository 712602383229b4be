# Pester 5 tests of the PowerPlan module against live powerplan services on the simulated backend,
# started by test/integrations/powershell.test.ts (or by CI), which passes them in the environment:
#   POWERPLAN_TEST_PORT        plain http, no token file; POWERPLAN_STATE_DIR is its state directory,
#                              where the module finds the service's control socket (as root)
#   POWERPLAN_TEST_TOKEN_PORT  http with a token file; POWERPLAN_TEST_TOKEN (control scope) and
#                              POWERPLAN_TEST_READ_TOKEN (read scope) are tokens in it
#   POWERPLAN_TEST_TLS_PORT    https with a test certificate for localhost that this host trusts;
#                              POWERPLAN_TEST_TLS_STATE_DIR its state directory
#   POWERPLAN_TEST_PWSH        this PowerShell's executable, for tests that need a second process
# Runs under Windows PowerShell 5.1 and PowerShell 7.

BeforeAll {
    $script:ModulePath = Join-Path $PSScriptRoot '../../../integrations/powershell/PowerPlan/PowerPlan.psd1'
    Import-Module $script:ModulePath -Force
    . (Join-Path $PSScriptRoot 'Compat.ps1')
    $script:Port = [int]$env:POWERPLAN_TEST_PORT
    $script:TokenPort = [int]$env:POWERPLAN_TEST_TOKEN_PORT
    $script:TlsPort = [int]$env:POWERPLAN_TEST_TLS_PORT
    $script:Guid = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    $script:HighPerformance = '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c'
    $script:Balanced = '381b4222-f694-41f0-9685-ff5bb260df2e'
    # The plan in force, asked without the module.
    function script:Get-ActiveId([int]$OnPort = $script:Port) {
        (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$OnPort/v1/plans/active").plan.id
    }
    # Runs a script in a new process of this same PowerShell with `Answer` as its standard input
    # (what a person types at a -Confirm prompt); returns its output lines.
    function script:Invoke-InChildHost([string]$Script, [string]$Answer) {
        $exe = $env:POWERPLAN_TEST_PWSH
        $full = "Import-Module '$script:ModulePath'; $Script"
        $Answer | & $exe -NoProfile -Command $full 2>&1 | ForEach-Object { "$_" }
    }
}

AfterAll {
    Remove-Module PowerPlan -ErrorAction SilentlyContinue
}

Describe 'The module as Windows PowerShell 5.1 reads it' {
    It '<File> parses, and uses no PowerShell 6/7-only syntax or parameters' -TestCases @(
        @{ File = 'integrations/powershell/PowerPlan/PowerPlan.psm1' }
        @{ File = 'integrations/powershell/PowerPlan/PowerPlanService.ps1' }
        @{ File = 'deploy/windows/install.ps1' }
        @{ File = '.github/scripts/powercfg-smoke.ps1' }
    ) {
        param($File)
        $found = @(Find-PowerShell7Syntax -Path (Join-Path $PSScriptRoot "../../../$File"))
        ($found | ForEach-Object { "line $($_.Line): $($_.What)" }) -join '; ' | Should -BeNullOrEmpty
    }

    It 'the check finds <What>' -Skip:($PSVersionTable.PSVersion.Major -lt 7) -TestCases @(
        @{ What = 'ternary'; Code = '$a = $true ? 1 : 2' }
        @{ What = 'null-coalescing'; Code = '$b = $null ?? 3' }
        @{ What = 'null-coalescing assignment'; Code = '$c ??= 4' }
        @{ What = 'null-conditional member'; Code = '$d = ${a}?.Length' }
        @{ What = 'null-conditional index'; Code = '$e = ${a}?[0]' }
        @{ What = 'pipeline chain'; Code = 'Get-Item . && Get-Item .' }
        @{ What = 'ForEach-Object -Parallel'; Code = '1..3 | ForEach-Object -Parallel { $_ }' }
        @{ What = '-SkipCertificateCheck'; Code = 'Invoke-RestMethod http://x -SkipCertificateCheck' }
        @{ What = '-SkipCertificateCheck splatted'; Code = '$r = @{ Uri = ''http://x''; SkipCertificateCheck = $true }; Invoke-WebRequest @r' }
        @{ What = 'ConvertFrom-Json -AsHashtable'; Code = '''{}'' | ConvertFrom-Json -AsHashtable' }
        @{ What = 'a clean block'; Code = 'function f { process { } clean { } }' }
        @{ What = 'a 7-only command'; Code = '1, 2 | Join-String -Separator ,' }
    ) {
        param($What, $Code)
        $file = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-compat-$PID.ps1"
        Set-Content -Path $file -Value $Code
        try { @(Find-PowerShell7Syntax -Path $file).Count | Should -BeGreaterThan 0 }
        finally { Remove-Item $file }
    }

    It 'the check lets a 7-only parameter pass behind a version check' {
        $file = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-compat-ok-$PID.ps1"
        Set-Content -Path $file -Value 'if ($PSVersionTable.PSVersion.Major -ge 6) { Invoke-RestMethod http://x -SkipCertificateCheck } else { Invoke-RestMethod http://x }'
        try { @(Find-PowerShell7Syntax -Path $file).Count | Should -Be 0 }
        finally { Remove-Item $file }
    }

    It 'exports the commands of the manifest, each with help' {
        $names = @((Get-Command -Module PowerPlan).Name | Sort-Object)
        $names | Should -Be @('Get-PowerPlanRecommendation', 'Get-PowerPlanStatus', 'Install-PowerPlanService', 'Invoke-PowerPlanBenchmark', 'Set-PowerPlan', 'Test-PowerPlan', 'Uninstall-PowerPlanService')
        (Test-ModuleManifest $script:ModulePath).ExportedFunctions.Keys | Sort-Object | Should -Be $names
        foreach ($n in $names) { (Get-Help $n).Synopsis | Should -Not -BeLike "*$n*[<]*" -Because "$n has a synopsis" }
    }
}

Describe 'Get-PowerPlanStatus' {
    It 'writes a PowerPlan.Status with the plan, its kind, owner and processor settings' {
        $s = Get-PowerPlanStatus -Port $script:Port
        $s.PSObject.TypeNames[0] | Should -Be 'PowerPlan.Status'
        @($s.PSObject.Properties.Name) | Should -Be @('ComputerName', 'PlanName', 'Kind', 'PlanId', 'Owner', 'PolicyManaged', 'CanSet', 'MinProcessorStateAC', 'MaxProcessorStateAC', 'Governor', 'Raw')
        $s.ComputerName | Should -Be 'localhost'
        $s.PlanId | Should -Match $script:Guid
        $s.PlanId | Should -Be (Get-ActiveId)
        $s.Kind | Should -BeIn @('high-performance', 'balanced', 'power-saver', 'ultimate-performance', 'custom')
        $s.Owner | Should -Be 'simulated'
        $s.CanSet | Should -BeTrue
        $s.PolicyManaged | Should -BeFalse
        # A percentage (Int32 from 5.1's ConvertFrom-Json, Int64 from 7's).
        $s.MaxProcessorStateAC | Should -BeGreaterThan 0
        $s.MaxProcessorStateAC | Should -BeLessOrEqual 100
        $s.MinProcessorStateAC | Should -BeLessOrEqual $s.MaxProcessorStateAC
        $s.Raw.plan.id | Should -Be $s.PlanId
    }

    It 'takes computer names from the pipeline, by value and by property name, in order' {
        $byValue = @('localhost', '127.0.0.1' | Get-PowerPlanStatus -Port $script:Port)
        $byValue.ComputerName | Should -Be @('localhost', '127.0.0.1')
        $objects = @([pscustomobject]@{ Name = 'localhost' }, [pscustomobject]@{ DNSHostName = '127.0.0.1' }, [pscustomobject]@{ CN = 'localhost' })
        $byProperty = @($objects | Get-PowerPlanStatus -Port $script:Port)
        $byProperty.ComputerName | Should -Be @('localhost', '127.0.0.1', 'localhost')
        ($byProperty.PlanId | Select-Object -Unique) | Should -Be (Get-ActiveId)
        @(Get-PowerPlanStatus -ComputerName localhost, 127.0.0.1 -Port $script:Port).Count | Should -Be 2
    }
}

Describe 'Set-PowerPlan' {
    BeforeEach {
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Force -Confirm:$false | Out-Null
    }

    It '-WhatIf shows the change and changes nothing' {
        $r = Set-PowerPlan high-performance -Port $script:Port -WhatIf
        $r.DryRun | Should -BeTrue
        $r.Changed | Should -BeFalse
        $r.BeforeId | Should -Be $script:Balanced
        $r.AfterId | Should -Be $script:HighPerformance
        $r.Before | Should -Be 'Balanced'
        $r.After | Should -Be 'High performance'
        Get-ActiveId | Should -Be $script:Balanced
    }

    It 'changes the plan and says so with Changed, Before and After; again changes nothing' {
        $r = Set-PowerPlan high-performance -Port $script:Port -Confirm:$false
        $r.PSObject.TypeNames[0] | Should -Be 'PowerPlan.SetResult'
        $r.Changed | Should -BeTrue
        $r.DryRun | Should -BeFalse
        $r.Before | Should -Be 'Balanced'
        $r.After | Should -Be 'High performance'
        $r.AfterId | Should -Be $script:HighPerformance
        Get-ActiveId | Should -Be $script:HighPerformance
        $again = Set-PowerPlan $script:HighPerformance -Port $script:Port -Confirm:$false
        $again.Changed | Should -BeFalse
        $again.DryRun | Should -BeFalse
    }

    It 'the plan already active: Changed and DryRun False, no prompt even with -Confirm, no What if' {
        $out = (Invoke-InChildHost "Set-PowerPlan balanced -Port $($script:Port) -Confirm | ForEach-Object { 'Changed=' + `$_.Changed + ' DryRun=' + `$_.DryRun }" '') -join "`n"
        $out | Should -Match 'Changed=False DryRun=False'
        $out | Should -Not -Match 'Confirm|switch from'
        $r = Set-PowerPlan balanced -Port $script:Port -WhatIf
        $r.Changed | Should -BeFalse
        $r.DryRun | Should -BeFalse
        $r.AfterId | Should -Be $script:Balanced
    }

    It 'a hold in force: PowerPlan.conflict naming the hold and -Force; -Force sets the plan and ends the hold' {
        # A hold needs control: as root, with the service's local administrator credential.
        $admin = @{ Authorization = 'Bearer ' + ([System.IO.File]::ReadAllText((Join-Path $env:POWERPLAN_STATE_DIR 'admin.token')).Trim()) }
        $hold = Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/holds" -Method Post -ContentType 'application/json' -Headers $admin -Body '{"plan":"power-saver","for":"1h","reason":"pester"}'
        $err = $null
        try { Set-PowerPlan high-performance -Port $script:Port -Confirm:$false } catch { $err = $_ }
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.conflict,Set-PowerPlan'
        $err.CategoryInfo.Category | Should -Be 'ResourceBusy'
        $err.Exception.Message | Should -BeLike "*$($hold.hold.id)*force*"
        (Get-PowerPlanStatus -Port $script:Port).Kind | Should -Be 'power-saver'
        $r = Set-PowerPlan high-performance -Port $script:Port -Force -Confirm:$false
        $r.Changed | Should -BeTrue
        $r.AfterId | Should -Be $script:HighPerformance
        @((Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/holds").holds).Count | Should -Be 0
    }

    It '-Confirm asks first: "N" changes nothing, "Y" changes the plan' {
        # One process answers two prompts: N to the first, Y to the second.
        $set = "Set-PowerPlan high-performance -Port $($script:Port) -Confirm | ForEach-Object { 'DryRun=' + `$_.DryRun + ' active=' + (Get-PowerPlanStatus -Port $($script:Port)).PlanId }"
        $out = (Invoke-InChildHost "$set; $set" "N`nY") -join "`n"
        $out | Should -Match 'switch from Balanced'
        $out | Should -Match "DryRun=True active=$($script:Balanced)"
        $out | Should -Match "DryRun=False active=$($script:HighPerformance)"
        Get-ActiveId | Should -Be $script:HighPerformance
    }

    It 'a plan the service does not know is a terminating error carrying the problem detail, and changes nothing' {
        $err = $null
        $out = @()
        try { $out = @('localhost', 'localhost' | Set-PowerPlan 'no such plan' -Port $script:Port -Confirm:$false -ErrorAction SilentlyContinue) }
        catch { $err = $_ }
        $out.Count | Should -Be 0
        $err | Should -Not -BeNullOrEmpty
        $err.FullyQualifiedErrorId | Should -Be 'PowerPlan.not_found,Set-PowerPlan'
        $err.CategoryInfo.Category | Should -Be 'ObjectNotFound'
        $err.TargetObject | Should -Be 'localhost'
        $err.Exception.Message | Should -BeLike "localhost: Not found (404 not_found): Plan 'no such plan' not found; available: *"
        $err.Exception.Problem.status | Should -Be 404
        $err.Exception.Problem.code | Should -Be 'not_found'
        Get-ActiveId | Should -Be $script:Balanced
    }

    It 'refuses an empty plan before asking any server' {
        { Set-PowerPlan -Plan '' -Port $script:Port } | Should -Throw -ErrorId 'ParameterArgumentValidationError*'
    }
}

Describe 'Invoke-PowerPlanBenchmark' {
    It '-WhatIf runs nothing' {
        $before = (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks").total
        Invoke-PowerPlanBenchmark -Port $script:Port -WhatIf | Should -BeNullOrEmpty
        (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks").total | Should -Be $before
    }

    It 'runs the quick benchmark and writes a PowerPlan.BenchmarkResult that the service keeps' {
        $b = Invoke-PowerPlanBenchmark -Port $script:Port -Force -WarningAction SilentlyContinue
        $b.PSObject.TypeNames[0] | Should -Be 'PowerPlan.BenchmarkResult'
        $b.ComputerName | Should -Be 'localhost'
        $b.Id | Should -Match '^bm-'
        $b.SingleThreadMops | Should -BeGreaterThan 0
        $b.AllCoreMops | Should -BeGreaterThan 0
        $b.Raw.profile | Should -Be 'quick'
        $b.Raw.forced | Should -BeTrue
        (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks/$($b.Id)").id | Should -Be $b.Id
    }
}

Describe 'Get-PowerPlanRecommendation' {
    BeforeAll {
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Confirm:$false | Out-Null
    }

    It 'writes a PowerPlan.Recommendation with the recommended plan and its reasons' {
        $r = Get-PowerPlanRecommendation -Port $script:Port -Benchmark none
        $r.PSObject.TypeNames[0] | Should -Be 'PowerPlan.Recommendation'
        $r.Raw.workload | Should -Be 'database'
        $r.Recommended | Should -Be 'High performance'
        $r.RecommendedId | Should -Be $script:HighPerformance
        $r.ChangeRecommended | Should -BeTrue
        $r.Confidence | Should -BeIn @('low', 'medium', 'high')
        $r.Summary | Should -Not -BeNullOrEmpty
        @($r.Reasons).Count | Should -BeGreaterThan 0
        $r.Reasons[0] | Should -BeOfType [string]
    }

    It 'passes the workload on: energy-saving is not advised High performance' {
        $r = Get-PowerPlanRecommendation -Workload energy-saving -Port $script:Port -Benchmark none -ErrorAction Stop
        $r.Raw.workload | Should -Be 'energy-saving'
        $r.RecommendedId | Should -Not -Be $script:HighPerformance
    }

    It 'refuses a workload it does not know before asking any server' {
        { Get-PowerPlanRecommendation -Workload gaming -Port $script:Port } | Should -Throw -ErrorId 'ParameterArgumentValidationError*'
    }

    It 'never measures: -Benchmark takes latest or none, and rests on the benchmark Invoke-PowerPlanBenchmark ran' {
        (Get-Command Get-PowerPlanRecommendation).Parameters['Benchmark'].Attributes.ValidValues | Should -Be @('latest', 'none')
        { Get-PowerPlanRecommendation -Benchmark run -Port $script:Port } | Should -Throw -ErrorId 'ParameterArgumentValidationError*'
        $before = (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks").total
        $b = Invoke-PowerPlanBenchmark -Port $script:Port -Force -Confirm:$false -WarningAction SilentlyContinue
        $r = Get-PowerPlanRecommendation -Port $script:Port
        $r.Raw.basis.benchmarkIds | Should -Be @($b.Id)
        (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks").total | Should -Be ($before + 1)
    }
}

Describe 'The control socket (no token configured)' {
    BeforeAll {
        $script:SavedStateDir = $env:POWERPLAN_STATE_DIR
        $script:NoCredential = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-no-credential-$PID"
        New-Item -ItemType Directory -Path $script:NoCredential -Force | Out-Null
    }
    AfterAll {
        $env:POWERPLAN_STATE_DIR = $script:SavedStateDir
        Remove-Item -Recurse -Force $script:NoCredential
    }

    It 'run as root / elevated, the module calls through the control socket and has control' {
        Test-Path (Join-Path $env:POWERPLAN_STATE_DIR 'control/powerplan.sock') | Should -BeTrue
        $r = Set-PowerPlan power-saver -Port $script:Port -Confirm:$false
        $r.Changed | Should -BeTrue
        Get-ActiveId | Should -Be 'a1841308-3541-4fab-bc81-f71556f20b4a'
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Confirm:$false | Out-Null
    }

    It 'without a control socket it still reads over TCP, and a change is a terminating PermissionDenied' {
        $env:POWERPLAN_STATE_DIR = $script:NoCredential
        try {
            (Get-PowerPlanStatus -Port $script:Port).PlanId | Should -Be $script:Balanced
            $err = $null
            try { Set-PowerPlan power-saver -Port $script:Port -Confirm:$false } catch { $err = $_ }
            $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.forbidden*'
            $err.CategoryInfo.Category | Should -Be 'PermissionDenied'
            $err.Exception.Problem.detail | Should -Match "needs the 'control' scope"
            $err.Exception.Problem.detail | Should -Match 'No token was sent'
            $err.Exception.Problem.detail | Should -Not -Match 'not valid'
            Get-ActiveId | Should -Be $script:Balanced
        }
        finally { $env:POWERPLAN_STATE_DIR = $script:SavedStateDir }
    }
}

Describe '-Token against a service with a token file' {
    It 'without a token: a terminating AuthenticationError carrying the detail' {
        $err = $null
        $saved = $env:POWERPLAN_STATE_DIR
        # No credential of this computer either (it would be another service's: refused as well).
        $env:POWERPLAN_STATE_DIR = [System.IO.Path]::GetTempPath()
        try { Get-PowerPlanStatus -Port $script:TokenPort } catch { $err = $_ }
        finally { $env:POWERPLAN_STATE_DIR = $saved }
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.unauthorized*'
        $err.CategoryInfo.Category | Should -Be 'AuthenticationError'
        $err.Exception.Problem.status | Should -Be 401
        $err.Exception.Message | Should -BeLike '*401 unauthorized*'
        # The service's text whole, placeholders included (PowerShell 7's error details drop <...>).
        $err.Exception.Problem.detail | Should -Match 'Authorization: Bearer <token>'
        $err.Exception.Problem.detail | Should -Match '--name <name>'
        $err.Exception.Message | Should -Be "localhost: $($err.Exception.Problem.title) (401 unauthorized): $($err.Exception.Problem.detail)"
        $err.ErrorDetails.Message | Should -Be $err.Exception.Message
    }

    It 'with the token as a string and as a SecureString' {
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $env:POWERPLAN_TEST_TOKEN).PlanId | Should -Match $script:Guid
        $secure = ConvertTo-SecureString $env:POWERPLAN_TEST_TOKEN -AsPlainText -Force
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $secure).PlanId | Should -Match $script:Guid
        $r = Set-PowerPlan power-saver -Port $script:TokenPort -Token $secure -Confirm:$false
        $r.After | Should -Be 'Power saver'
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $secure).Kind | Should -Be 'power-saver'
    }

    It 'a read-only token cannot change the plan: PermissionDenied with the detail, nothing changed' {
        $err = $null
        try { Set-PowerPlan balanced -Port $script:TokenPort -Token $env:POWERPLAN_TEST_READ_TOKEN -Confirm:$false } catch { $err = $_ }
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.forbidden*'
        $err.CategoryInfo.Category | Should -Be 'PermissionDenied'
        $err.Exception.Problem.detail | Should -Match 'control'
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $env:POWERPLAN_TEST_READ_TOKEN).Kind | Should -Be 'power-saver'
    }
}

Describe 'The DSC resource PowerPlan (class-based; Get, Test and Set as the LCM calls them)' {
    It 'Test is $false while another plan is active, Set switches, then Test is $true and Get reports it' {
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Force -Confirm:$false | Out-Null
        $script = "using module '$script:ModulePath'`n" + (@(
                "`$r = [PowerPlan]::new(); `$r.Plan = 'high-performance'; `$r.Port = $($script:Port)"
                "'TEST1 ' + `$r.Test()"
                "`$r.Set()"
                "'TEST2 ' + `$r.Test()"
                "`$g = `$r.Get(); 'GET ' + `$g.ActivePlanId + ' ' + `$g.Plan"
            ) -join "`n")
        $out = @(& $env:POWERPLAN_TEST_PWSH -NoProfile -Command $script 2>&1 | ForEach-Object { "$_" })
        $out | Should -Contain 'TEST1 False'
        $out | Should -Contain 'TEST2 True'
        $out | Should -Contain "GET $($script:HighPerformance) high-performance"
        Get-ActiveId | Should -Be $script:HighPerformance
        (Import-PowerShellDataFile $script:ModulePath).DscResourcesToExport | Should -Be @('PowerPlan')
    }
}

Describe 'The control socket of this computer, without -Token' {
    BeforeAll {
        # The plain service's socket, named as a session on that host may; asked for the port of
        # the service with a token file, which would refuse the call over TCP without a token.
        $script:Socket = Join-Path $env:POWERPLAN_STATE_DIR 'control/powerplan.sock'
        $script:WithSocket = {
            param([string]$Command)
            $saved = $env:POWERPLAN_CONTROL_SOCKET
            try { $env:POWERPLAN_CONTROL_SOCKET = $script:Socket; @(Invoke-InChildHost "`$Error.Clear(); $Command; 'ERRORS ' + `$Error.Count" '') }
            finally { $env:POWERPLAN_CONTROL_SOCKET = $saved }
        }
    }

    It 'is used for a loopback computer, sends no token and leaves nothing in $Error' {
        $out = & $script:WithSocket "Get-PowerPlanStatus -Port $($script:TokenPort) | ForEach-Object { 'KIND ' + `$_.Kind }"
        ($out -join "`n") | Should -Match 'KIND \S+'
        $out | Should -Contain 'ERRORS 0'
    }

    It 'is not used when a -Token is given: that goes over TCP to the port given' {
        $out = & $script:WithSocket "try { Get-PowerPlanStatus -Port $($script:TokenPort) -Token 'pp_wrong' } catch { 'FAILED ' + `$_.FullyQualifiedErrorId }"
        ($out -join "`n") | Should -Match 'FAILED PowerPlan.unauthorized'
    }
}

Describe '-UseSsl against the service in TLS mode' {
    BeforeAll {
        $script:SavedStateDir = $env:POWERPLAN_STATE_DIR
        $env:POWERPLAN_STATE_DIR = $env:POWERPLAN_TEST_TLS_STATE_DIR
    }
    AfterAll { $env:POWERPLAN_STATE_DIR = $script:SavedStateDir }

    It 'reads and sets the plan over https when the certificate is trusted' {
        $s = Get-PowerPlanStatus -ComputerName localhost -Port $script:TlsPort -UseSsl
        $s.Owner | Should -Be 'simulated'
        # -UseSsl goes over TCP: control with the service's local administrator credential as -Token.
        $admin = [System.IO.File]::ReadAllText((Join-Path $env:POWERPLAN_STATE_DIR 'admin.token')).Trim()
        $r = Set-PowerPlan high-performance -ComputerName localhost -Port $script:TlsPort -UseSsl -Token $admin -Confirm:$false
        $r.AfterId | Should -Be $script:HighPerformance
        (Get-PowerPlanStatus -ComputerName localhost -Port $script:TlsPort -UseSsl).PlanId | Should -Be $script:HighPerformance
    }

    It 'plain http against the TLS port fails with a terminating error' {
        # Over TCP: without a control socket of this computer (which would answer whatever the port).
        $env:POWERPLAN_STATE_DIR = [System.IO.Path]::GetTempPath()
        { Get-PowerPlanStatus -ComputerName localhost -Port $script:TlsPort } | Should -Throw -ErrorId 'PowerPlan.*'
    }

    It 'an untrusted certificate fails and says to trust it (Linux: a CA store without it)' -Skip:(-not $IsLinux) {
        $empty = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-empty-ca-$PID.pem"
        Set-Content -Path $empty -Value ''
        $saved = $env:SSL_CERT_FILE
        try {
            $env:SSL_CERT_FILE = $empty
            $out = Invoke-InChildHost "try { Get-PowerPlanStatus -Port $($script:TlsPort) -UseSsl } catch { 'ERROR ' + `$_.FullyQualifiedErrorId + ' ' + `$_.Exception.Message }" ''
        }
        finally { $env:SSL_CERT_FILE = $saved; Remove-Item $empty }
        $text = $out -join "`n"
        $text | Should -Match 'ERROR PowerPlan.connection_failed'
        $text | Should -Match 'certificate'
        $text | Should -Match "Trust the service's certificate"
    }
}

Describe 'Failures by PowerShell''s conventions (a script without try/catch, in a new process)' {
    BeforeAll {
        # Every case in one new process: each clears $Error, runs its command, prints the output
        # objects' computers, then each error record as id|category|target|message.
        $p = $script:Port
        $script:Cases = [ordered]@{}
        foreach ($action in 'Continue', 'SilentlyContinue', 'Ignore', 'Stop') {
            $script:Cases["unknown-$action"] = "Set-PowerPlan nope -ComputerName 127.0.0.1 -Port $p -Confirm:`$false -ErrorAction $action"
        }
        # 127.0.0.2 has no service (it listens on 127.0.0.1 only): connection refused.
        $script:Cases['pipeline'] = "'localhost', '127.0.0.2', '127.0.0.1' | Get-PowerPlanStatus -Port $p -ErrorAction SilentlyContinue"
        $script:Cases['bad-name'] = "'127.0.0.1:bad', 'localhost' | Get-PowerPlanStatus -Port $p"
        $script:Commands = @('Get-PowerPlanStatus', 'Get-PowerPlanRecommendation -Benchmark none', 'Test-PowerPlan -Kind balanced', 'Set-PowerPlan balanced -Confirm:$false')
        foreach ($c in $script:Commands) { $script:Cases["list-$c"] = "$c -ComputerName 127.0.0.2, localhost -Port $p -ErrorAction Ignore" }
        $all = foreach ($name in $script:Cases.Keys) {
            "'CASE $name'; `$Error.Clear(); $($script:Cases[$name]) | ForEach-Object { 'OUT ' + `$_.ComputerName }; `$Error | ForEach-Object { 'ERR ' + `$_.FullyQualifiedErrorId + '|' + `$_.CategoryInfo.Category + '|' + `$_.TargetObject + '|' + `$_.Exception.Message }; 'DONE'"
        }
        $script:Results = @{}
        $current = $null
        foreach ($line in (Invoke-InChildHost ($all -join "`n") '')) {
            if ($line -like 'CASE *') { $current = $line.Substring(5); $script:Results[$current] = New-Object System.Collections.ArrayList; continue }
            if ($current) { [void]$script:Results[$current].Add($line) }
        }
        function script:Get-Case([string]$Name) { @($script:Results[$Name]) }
    }

    It 'an unknown plan leaves one ErrorRecord with -ErrorAction <Action>, and no output' -TestCases @(
        @{ Action = 'Continue' }, @{ Action = 'SilentlyContinue' }, @{ Action = 'Ignore' }, @{ Action = 'Stop' }
    ) {
        param($Action)
        $out = Get-Case "unknown-$Action"
        $errors = @($out | Where-Object { $_ -like 'ERR *' })
        $errors.Count | Should -Be 1 -Because ($out -join "`n")
        $errors[0] | Should -BeLike "ERR PowerPlan.not_found,Set-PowerPlan|ObjectNotFound|127.0.0.1|127.0.0.1: Not found (404 not_found): Plan 'nope' not found; available: *"
        @($out | Where-Object { $_ -like 'OUT *' }).Count | Should -Be 0
        $out | Should -Contain 'DONE'
        ($out -join "`n") | Should -Not -Match 'PropertyNotFound|WebException|HttpResponseException'
    }

    It 'a pipeline of hosts stops at the first failing host: those before it answered, those after it not asked' {
        $out = Get-Case 'pipeline'
        @($out | Where-Object { $_ -like 'OUT *' }) | Should -Be @('OUT localhost')
        $errors = @($out | Where-Object { $_ -like 'ERR *' })
        $errors.Count | Should -Be 1 -Because ($out -join "`n")
        $errors[0] | Should -BeLike 'ERR PowerPlan.connection_failed,Get-PowerPlanStatus|ConnectionError|127.0.0.2|127.0.0.2: *'
    }

    It 'a computer name with a port in it is refused before any call, as one error' {
        $out = Get-Case 'bad-name'
        @($out | Where-Object { $_ -like 'OUT *' }).Count | Should -Be 0
        $errors = @($out | Where-Object { $_ -like 'ERR *' })
        $errors.Count | Should -Be 1 -Because ($out -join "`n")
        $errors[0] | Should -BeLike 'ERR PowerPlan.invalid_computer_name,Get-PowerPlanStatus|InvalidArgument|127.0.0.1:bad|127.0.0.1:bad: not a host name or IP address*'
    }

    It 'the same for -ComputerName a, b with <Command>' -TestCases @(
        @{ Command = 'Get-PowerPlanStatus' }, @{ Command = 'Get-PowerPlanRecommendation -Benchmark none' }, @{ Command = 'Test-PowerPlan -Kind balanced' }, @{ Command = 'Set-PowerPlan balanced -Confirm:$false' }
    ) {
        param($Command)
        $out = Get-Case "list-$Command"
        @($out | Where-Object { $_ -like 'OUT *' }).Count | Should -Be 0
        @($out | Where-Object { $_ -like 'ERR PowerPlan.connection_failed,*|127.0.0.2|*' }).Count | Should -Be 1 -Because ($out -join "`n")
        @($out | Where-Object { $_ -like 'ERR *' }).Count | Should -Be 1
    }
}

Describe 'Test-PowerPlan' {
    BeforeAll {
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Force -Confirm:$false | Out-Null
    }

    It '-Kind answers $true or $false' {
        Test-PowerPlan -Kind balanced -Port $script:Port | Should -BeTrue
        Test-PowerPlan -Kind high-performance -Port $script:Port | Should -BeFalse
        Test-PowerPlan -Kind high-performance, balanced -Port $script:Port | Should -BeTrue
        (Test-PowerPlan -Kind balanced -Port $script:Port).GetType().Name | Should -Be 'Boolean'
    }

    It '-Plan takes the id (braces and case do not matter) or the exact name' {
        Test-PowerPlan -Plan $script:Balanced -Port $script:Port | Should -BeTrue
        Test-PowerPlan -Plan "{$($script:Balanced.ToUpper())}" -Port $script:Port | Should -BeTrue
        Test-PowerPlan 'BALANCED' -Port $script:Port | Should -BeTrue
        Test-PowerPlan 'High performance' -Port $script:Port | Should -BeFalse
        Test-PowerPlan $script:HighPerformance -Port $script:Port | Should -BeFalse
    }

    It '-Detailed gives the reason, also for a plan that is not installed' {
        $r = Test-PowerPlan -Kind high-performance -Port $script:Port -Detailed
        $r.PSObject.TypeNames[0] | Should -Be 'PowerPlan.TestResult'
        $r.Compliant | Should -BeFalse
        $r.ActiveId | Should -Be $script:Balanced
        $r.ActiveKind | Should -Be 'balanced'
        $r.Expected | Should -Be 'high-performance'
        $r.Reason | Should -Be "localhost: Balanced ($($script:Balanced), balanced) is active, not high-performance."
        $missing = Test-PowerPlan 'No such plan' -Port $script:Port -Detailed
        $missing.Compliant | Should -BeFalse
        $missing.Reason | Should -BeLike "*no plan 'No such plan' is installed (plans: Balanced ($($script:Balanced)), *"
        (Test-PowerPlan -Kind balanced -Port $script:Port -Detailed).Reason | Should -BeLike '*is active, as expected (balanced).'
    }

    It 'one answer per computer, from the pipeline by value and by property name' {
        @('localhost', '127.0.0.1' | Test-PowerPlan -Kind balanced -Port $script:Port) | Should -Be @($true, $true)
        $r = @([pscustomobject]@{ Name = 'localhost' }, [pscustomobject]@{ DNSHostName = '127.0.0.1' } | Test-PowerPlan -Kind power-saver -Port $script:Port -Detailed)
        $r.ComputerName | Should -Be @('localhost', '127.0.0.1')
        $r.Compliant | Should -Be @($false, $false)
    }

    It 'needs only the read scope' {
        Test-PowerPlan -Kind power-saver, balanced, high-performance -Port $script:TokenPort -Token $env:POWERPLAN_TEST_READ_TOKEN | Should -BeTrue
    }

    It 'refuses a kind it does not know, and -Plan with -Kind, before asking any server' {
        { Test-PowerPlan -Kind fast -Port $script:Port } | Should -Throw -ErrorId 'ParameterArgumentValidationError*'
        { Test-PowerPlan -Plan x -Kind balanced -Port $script:Port } | Should -Throw -ErrorId 'AmbiguousParameterSet*'
    }

    It 'the example checks for Pester and dbachecks pass where the plan is right and fail with the reason where not' {
        $checks = Join-Path $PSScriptRoot '../../../integrations/powershell/examples/PowerPlan.Checks.ps1'
        $run = foreach ($kind in 'balanced', 'high-performance') {
            "`$c = New-PesterContainer -Path '$checks' -Data @{ ComputerName = 'localhost', '127.0.0.1'; Kind = '$kind'; Port = $($script:Port) }; `$r = Invoke-Pester -Container `$c -PassThru -Output None; 'RESULT $kind ' + `$r.PassedCount + '/' + `$r.FailedCount; `$r.Failed | ForEach-Object { 'FAILED ' + `$_.ErrorRecord[0].Exception.Message }"
        }
        $out = (Invoke-InChildHost ("Import-Module Pester -MinimumVersion 5.0`n" + ($run -join "`n")) '') -join "`n"
        $out | Should -Match 'RESULT balanced 2/0'
        $out | Should -Match 'RESULT high-performance 0/2'
        $out | Should -Match "FAILED Expected \`$true, because localhost: Balanced \($($script:Balanced), balanced\) is active, not high-performance"
    }
}
